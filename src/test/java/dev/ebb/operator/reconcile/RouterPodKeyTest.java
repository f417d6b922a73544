package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.render.RouterRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which cached Pods the router index files under a deployment: only its router's, by the labels its Deployment selects. */
class RouterPodKeyTest {
    private static Pod pod(Map<String, String> labels) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace("team-a")
                .withName("p")
                .withLabels(labels)
                .endMetadata()
                .build();
    }

    private static Map<String, String> with(Map<String, String> base, String key, String value) {
        Map<String, String> labels = new HashMap<>(base);
        labels.put(key, value);
        return labels;
    }

    static Stream<Arguments> pods() {
        Map<String, String> router = RouterRenderer.labels("qwen");
        return Stream.of(
                Arguments.of("the router's Pod", pod(router), List.of("team-a/qwen")),
                Arguments.of(
                        "a router Pod with more labels",
                        pod(with(router, "pod-template-hash", "7d9f")),
                        List.of("team-a/qwen")),
                Arguments.of("an engine Pod of the deployment", pod(Map.of(Labels.DEPLOYMENT, "qwen")), List.of()),
                Arguments.of("another component", pod(with(router, RouterRenderer.COMPONENT, "engine")), List.of()),
                Arguments.of(
                        "the router label without a deployment",
                        pod(Map.of(RouterRenderer.COMPONENT, RouterRenderer.COMPONENT_ROUTER)),
                        List.of()),
                Arguments.of(
                        "no labels at all",
                        new PodBuilder()
                                .withNewMetadata()
                                .withNamespace("team-a")
                                .withName("p")
                                .endMetadata()
                                .build(),
                        List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pods")
    void filesOnlyRouterPodsUnderTheirDeployment(String what, Pod pod, List<String> keys) {
        assertThat(ModelDeploymentReconciler.routerPodKey(pod)).isEqualTo(keys);
    }
}
