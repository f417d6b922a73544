package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** What each gateway Pod is told on a pass, from its own list and the deployment's Pods. */
class GatewayMembershipTest {
    private static final String SERVING_ID = "5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21";
    private static final String WITHDRAWN_ID = "0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90";

    /** An engine Pod as the operator renders it, at an address, with its labels and readiness as named. */
    private static Pod engine(
            String name, String ip, String member, String serving, boolean ready, boolean terminating) {
        PodBuilder pod = new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels(Labels.ROLE_KIND, "Server")
                .addToLabels(Labels.MEMBER_INDEX, member)
                .addToLabels(Labels.SERVING, serving)
                .withDeletionTimestamp(terminating ? "2026-12-02T10:00:00Z" : null)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("main")
                .addNewPort()
                .withContainerPort(8000)
                .endPort()
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPodIP(ip)
                .addNewCondition()
                .withType("Ready")
                .withStatus(ready ? "True" : "False")
                .endCondition()
                .endStatus();
        return pod.build();
    }

    private static final Pod SERVING = engine("qwen-server-r0-m0", "10.0.0.2", "0", "true", true, false);
    private static final Pod WITHDRAWN = engine("qwen-server-r1-m0", "10.0.0.3", "0", "false", true, false);
    private static final Pod LOADING = engine("qwen-server-r2-m0", "10.0.0.4", "0", "true", false, false);
    private static final Pod FOLLOWER = engine("qwen-server-r0-m1", "10.0.0.5", "1", "true", true, false);
    private static final Pod TERMINATING = engine("qwen-server-r3-m0", "10.0.0.6", "0", "true", true, true);
    private static final RouterAnswers.SglangWorker SERVING_WORKER =
            new RouterAnswers.SglangWorker(SERVING_ID, "10.0.0.2", 0);
    private static final RouterAnswers.SglangWorker WITHDRAWN_WORKER =
            new RouterAnswers.SglangWorker(WITHDRAWN_ID, "10.0.0.3", 0);

    record Case(
            String name,
            List<GatewayMembership.Listing> listings,
            List<Pod> pods,
            Map<String, List<String>> remove,
            Map<String, List<String>> add,
            Set<String> unrouted,
            List<String> unread) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static GatewayMembership.Listing lists(String gatewayPod, RouterAnswers.SglangWorker... workers) {
        return new GatewayMembership.Listing(gatewayPod, Optional.of(List.of(workers)));
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "in step: the serving leader listed, nothing else",
                        List.of(lists("gw-0", SERVING_WORKER)),
                        List.of(SERVING, FOLLOWER),
                        Map.of("gw-0", List.of()),
                        Map.of("gw-0", List.of()),
                        Set.of(),
                        List.of()),
                new Case(
                        "a withdrawn replica still listed is removed, whatever withdrew it",
                        List.of(lists("gw-0", SERVING_WORKER, WITHDRAWN_WORKER)),
                        List.of(SERVING, WITHDRAWN),
                        Map.of("gw-0", List.of(WITHDRAWN_ID)),
                        Map.of("gw-0", List.of()),
                        Set.of(),
                        List.of()),
                new Case(
                        "a serving, ready leader missing from one gateway Pod is added back there only",
                        List.of(lists("gw-0", SERVING_WORKER), lists("gw-1")),
                        List.of(SERVING),
                        Map.of("gw-0", List.of(), "gw-1", List.of()),
                        Map.of("gw-0", List.of(), "gw-1", List.of("http://10.0.0.2:8000")),
                        Set.of("qwen-server-r0-m0"),
                        List.of()),
                new Case(
                        "a leader not ready yet, a follower and a terminating Pod are never added",
                        List.of(lists("gw-0")),
                        List.of(LOADING, FOLLOWER, TERMINATING),
                        Map.of("gw-0", List.of()),
                        Map.of("gw-0", List.of()),
                        Set.of(),
                        List.of()),
                new Case(
                        "a terminating Pod still listed is removed",
                        List.of(lists("gw-0", new RouterAnswers.SglangWorker(SERVING_ID, "10.0.0.6", 0))),
                        List.of(TERMINATING),
                        Map.of("gw-0", List.of(SERVING_ID)),
                        Map.of("gw-0", List.of()),
                        Set.of(),
                        List.of()),
                new Case(
                        "a gateway Pod whose list cannot be read is told nothing and named",
                        List.of(new GatewayMembership.Listing("gw-0", Optional.empty()), lists("gw-1", SERVING_WORKER)),
                        List.of(SERVING, WITHDRAWN),
                        Map.of("gw-1", List.of()),
                        Map.of("gw-1", List.of()),
                        Set.of(),
                        List.of("gw-0")),
                new Case(
                        "a Pod without an address is neither removed nor added",
                        List.of(lists("gw-0", SERVING_WORKER)),
                        List.of(SERVING, engine("qwen-server-r4-m0", null, "0", "true", true, false)),
                        Map.of("gw-0", List.of()),
                        Map.of("gw-0", List.of()),
                        Set.of(),
                        List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void eachGatewayPodIsToldWhatItsOwnListLacksOrHoldsTooMany(Case c) {
        GatewayMembership.Plan plan = GatewayMembership.decide(c.listings(), c.pods());

        assertThat(plan.remove()).isEqualTo(c.remove());
        assertThat(plan.add()).isEqualTo(c.add());
        assertThat(plan.unrouted()).isEqualTo(c.unrouted());
        assertThat(plan.unread()).isEqualTo(c.unread());
        assertThat(plan.nothingToSend())
                .isEqualTo(c.remove().values().stream().allMatch(List::isEmpty)
                        && c.add().values().stream().allMatch(List::isEmpty));
    }
}
