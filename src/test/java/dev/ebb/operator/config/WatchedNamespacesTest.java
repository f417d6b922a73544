package dev.ebb.operator.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.config.WatchedNamespaces.Scope;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WatchedNamespacesTest {
    static Stream<Arguments> values() {
        return Stream.of(
                // OLM's AllNamespaces, and the downward API's answer for an absent annotation (make deploy)
                Arguments.of("", Scope.ALL, List.of(), List.of(), "JOSDK_ALL_NAMESPACES"),
                Arguments.of(null, Scope.ALL, List.of(), List.of(), "JOSDK_ALL_NAMESPACES"),
                Arguments.of("  \t ", Scope.ALL, List.of(), List.of(), "JOSDK_ALL_NAMESPACES"),
                // OwnNamespace and SingleNamespace: one name; MultiNamespace: OLM's sorted, comma-joined list
                Arguments.of("team-a", Scope.LISTED, List.of("team-a"), List.of(), "team-a"),
                Arguments.of("team-a,team-b", Scope.LISTED, List.of("team-a", "team-b"), List.of(), "team-a,team-b"),
                // hand-written: spaces, empty entries, duplicates, any order
                Arguments.of(
                        " team-b , ,team-a,,team-b ,",
                        Scope.LISTED,
                        List.of("team-a", "team-b"),
                        List.of(),
                        "team-a,team-b"),
                // names Kubernetes refuses are left out and told
                Arguments.of(
                        "team-a,Team_B,-x,x-,a.b,*",
                        Scope.LISTED,
                        List.of("team-a"),
                        List.of("Team_B", "-x", "x-", "a.b", "*"),
                        "team-a"),
                Arguments.of(
                        "a".repeat(63) + "," + "b".repeat(64),
                        Scope.LISTED,
                        List.of("a".repeat(63)),
                        List.of("b".repeat(64)),
                        "a".repeat(63)),
                // nothing usable, yet something was asked for: the operator's own namespace, never every one
                Arguments.of(",,,", Scope.OWN, List.of(), List.of(), "JOSDK_WATCH_CURRENT"),
                Arguments.of(
                        "JOSDK_ALL_NAMESPACES",
                        Scope.OWN,
                        List.of(),
                        List.of("JOSDK_ALL_NAMESPACES"),
                        "JOSDK_WATCH_CURRENT"),
                Arguments.of(
                        "bad name, Bad name",
                        Scope.OWN,
                        List.of(),
                        List.of("bad name", "Bad name"),
                        "JOSDK_WATCH_CURRENT"),
                Arguments.of("team-a\nteam-b", Scope.OWN, List.of(), List.of("team-a\nteam-b"), "JOSDK_WATCH_CURRENT"));
    }

    @ParameterizedTest
    @MethodSource("values")
    void whateverTheValueTheScopeIsOneTheOperatorCanRunWith(
            String raw, Scope scope, List<String> namespaces, List<String> refused, String sdkValue) {
        WatchedNamespaces watched = WatchedNamespaces.of(raw);

        assertThat(watched.scope()).isEqualTo(scope);
        assertThat(watched.namespaces()).containsExactlyElementsOf(namespaces);
        assertThat(watched.refused()).containsExactlyElementsOf(refused);
        assertThat(watched.sdkValue()).isEqualTo(sdkValue);
    }

    private static SmallRyeConfig config(Map<String, String> properties) {
        return new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(properties, "test", 300))
                .withInterceptors(new WatchNamespacesInterceptor())
                .build();
    }

    @ParameterizedTest
    @MethodSource("values")
    void theSdkReadsItsNamespacesFromTheSettingWhateverItsOwnPropertySays(
            String raw, Scope scope, List<String> namespaces, List<String> refused, String sdkValue) {
        if (raw == null) {
            return;
        }
        SmallRyeConfig config = config(Map.of(
                WatchNamespacesInterceptor.WATCH_NAMESPACES,
                raw,
                WatchNamespacesInterceptor.SDK_NAMESPACES,
                "JOSDK_ALL_NAMESPACES"));

        assertThat(config.getConfigValue(WatchNamespacesInterceptor.SDK_NAMESPACES)
                        .getValue())
                .isEqualTo(sdkValue);
    }

    @Test
    void unsetTheSdksOwnPropertyStandsAndIsNamedOnlyWhenTheSettingIs() {
        SmallRyeConfig unset = config(Map.of(WatchNamespacesInterceptor.SDK_NAMESPACES, "team-a"));
        SmallRyeConfig set = config(Map.of(WatchNamespacesInterceptor.WATCH_NAMESPACES, "team-b"));

        assertThat(unset.getConfigValue(WatchNamespacesInterceptor.SDK_NAMESPACES)
                        .getValue())
                .isEqualTo("team-a");
        assertThat(set.getConfigValue(WatchNamespacesInterceptor.SDK_NAMESPACES).getValue())
                .isEqualTo("team-b");
        assertThat(set.getPropertyNames()).contains(WatchNamespacesInterceptor.SDK_NAMESPACES);
    }
}
