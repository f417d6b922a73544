package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which of a router's Pods are asked, and when the router's answer cannot be known before anything is asked. */
class RouterReplicasTest {
    private static Pod routerPod(String name, String phase, String ready, String ip) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).endMetadata();
        pod.withNewStatus().withPhase(phase).withPodIP(ip).endStatus();
        if (ready != null) {
            pod.editStatus()
                    .addNewCondition()
                    .withType("Ready")
                    .withStatus(ready)
                    .endCondition()
                    .endStatus();
        }
        return pod.build();
    }

    private static final Pod READY_A = routerPod("router-a", "Running", "True", "10.0.0.2");
    private static final Pod READY_B = routerPod("router-b", "Running", "True", "10.0.0.3");

    static Stream<Arguments> routers() {
        return Stream.of(
                Arguments.of("one ready Pod", List.of(READY_A), Optional.of(List.of("router-a"))),
                Arguments.of(
                        "every ready Pod, in name order",
                        List.of(READY_B, READY_A),
                        Optional.of(List.of("router-a", "router-b"))),
                Arguments.of(
                        "a ready Pod beside one that is not",
                        List.of(READY_A, routerPod("router-b", "Running", "False", "10.0.0.3")),
                        Optional.empty()),
                Arguments.of(
                        "a ready Pod beside one not scheduled yet, which has routed nothing",
                        List.of(READY_A, routerPod("router-b", "Pending", null, null)),
                        Optional.of(List.of("router-a"))),
                Arguments.of(
                        "a ready Pod beside a surge Pod that cannot pull its image, which has an address but has routed nothing",
                        List.of(READY_A, routerPod("router-b", "Pending", "False", "10.0.0.3")),
                        Optional.of(List.of("router-a"))),
                Arguments.of(
                        "only a Pod not scheduled yet",
                        List.of(routerPod("router-a", "Pending", null, null)),
                        Optional.empty()),
                Arguments.of(
                        "a ready Pod beside a terminating one on a lost node, which did route",
                        List.of(
                                READY_A,
                                new PodBuilder(routerPod("router-b", "Running", "Unknown", "10.0.0.3"))
                                        .editMetadata()
                                        .withDeletionTimestamp("2026-11-30T10:00:00Z")
                                        .endMetadata()
                                        .build()),
                        Optional.empty()),
                Arguments.of(
                        "a ready Pod without an address",
                        List.of(routerPod("router-a", "Running", "True", null)),
                        Optional.empty()),
                Arguments.of(
                        "a ready Pod with a blank address",
                        List.of(routerPod("router-a", "Running", "True", " ")),
                        Optional.empty()),
                Arguments.of(
                        "a Pod with no status at all",
                        List.of(new PodBuilder()
                                .withNewMetadata()
                                .withName("router-a")
                                .endMetadata()
                                .build()),
                        Optional.empty()),
                Arguments.of("no Pod", List.of(), Optional.empty()),
                Arguments.of(
                        "only Pods whose containers ended",
                        List.of(
                                routerPod("router-a", "Failed", "False", "10.0.0.2"),
                                routerPod("router-b", "Succeeded", "False", null)),
                        Optional.empty()),
                Arguments.of(
                        "a ready Pod beside an evicted one",
                        List.of(READY_A, routerPod("router-b", "Failed", "False", "10.0.0.3")),
                        Optional.of(List.of("router-a"))),
                Arguments.of(
                        "a terminating Pod still ready still answers for what it routes",
                        List.of(new PodBuilder(READY_A)
                                .editMetadata()
                                .withDeletionTimestamp("2026-11-30T10:00:00Z")
                                .endMetadata()
                                .build()),
                        Optional.of(List.of("router-a"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routers")
    void everyRouterPodThatCanRouteMustBeAskable(String why, List<Pod> routerPods, Optional<List<String>> asked) {
        RouterReplicas.Decision decision = RouterReplicas.toAsk(routerPods);

        if (asked.isPresent()) {
            assertThat(decision)
                    .isInstanceOfSatisfying(
                            RouterReplicas.Ask.class,
                            ask -> assertThat(ask.pods())
                                    .extracting(p -> p.getMetadata().getName())
                                    .containsExactlyElementsOf(asked.get()));
        } else {
            assertThat(decision).isInstanceOf(RouterReplicas.CannotTell.class);
        }
    }

    @Test
    void cannotTellNamesThePodThatCannotBeAsked() {
        assertThat(RouterReplicas.toAsk(List.of(READY_A, routerPod("router-b", "Running", "False", "10.0.0.3"))))
                .isEqualTo(new RouterReplicas.CannotTell("router Pod router-b is not ready"));
        assertThat(RouterReplicas.toAsk(List.of(routerPod("router-a", "Running", "True", null))))
                .isEqualTo(new RouterReplicas.CannotTell("no router Pod has run yet"));
    }
}
