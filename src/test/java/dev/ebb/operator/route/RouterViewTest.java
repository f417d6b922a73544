package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What a router's replicas say together. */
class RouterViewTest {
    private static final RouterView DROPPED = new RouterView(Optional.of(false), Map.of());
    private static final RouterView SELECTS = new RouterView(Optional.of(true), Map.of());
    private static final RouterView UNKNOWN = RouterView.unavailable("did not answer within 2 s");

    static Stream<Arguments> replicas() {
        return Stream.of(
                Arguments.of("one replica that dropped the target", List.of(DROPPED), DROPPED),
                Arguments.of("every replica dropped it", List.of(DROPPED, DROPPED, DROPPED), DROPPED),
                Arguments.of("one of several still selects it", List.of(DROPPED, SELECTS, DROPPED), SELECTS),
                Arguments.of(
                        "one cannot tell beside those that dropped it",
                        List.of(DROPPED, UNKNOWN, DROPPED),
                        RouterView.unavailable("router Pod router-1 did not answer within 2 s")),
                Arguments.of(
                        "one cannot tell beside one that selects",
                        List.of(SELECTS, UNKNOWN),
                        RouterView.unavailable("router Pod router-1 did not answer within 2 s")),
                Arguments.of("no replica at all", List.of(), RouterView.unavailable("the router has no Pod to ask")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("replicas")
    void oneReplicaThatHoldsTheTargetOrCannotTellSpeaksForTheRouter(
            String why, List<RouterView> replicas, RouterView router) {
        Map<String, RouterView> named = new LinkedHashMap<>();
        for (int i = 0; i < replicas.size(); i++) {
            named.put("router-" + i, replicas.get(i));
        }
        assertThat(RouterView.allOf(named)).isEqualTo(router);
    }

    @Test
    void eachReplicasDispatchCountsStayItsOwn() {
        RouterView router = RouterView.allOf(Map.of(
                "router-0", new RouterView(Optional.of(false), Map.of("qwen-server-r1-m0", 4.0)),
                "router-1", new RouterView(Optional.of(false), Map.of("qwen-server-r1-m0", 0.0))));

        assertThat(router)
                .isEqualTo(new RouterView(
                        Optional.of(false),
                        Map.of("router-0/qwen-server-r1-m0", 4.0, "router-1/qwen-server-r1-m0", 0.0)));
    }
}
