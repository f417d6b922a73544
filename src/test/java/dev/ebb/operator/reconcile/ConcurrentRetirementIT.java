package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.RoutedSimWorld;
import dev.ebb.operator.sim.SimOperator;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reduction by two retires both leaving replicas at once, each on its own record in status.retirements[]: both are
 * held by their own requests at the same time, an operator restart in the middle resumes both, and a scale back up
 * gives both back to service without creating anything.
 */
class ConcurrentRetirementIT {
    private static final String NS = "concurrent";
    private static final List<String> STAYING = List.of("qwen-server-r0-m0", "qwen-server-r1-m0");
    private static final List<String> LEAVING = List.of("qwen-server-r2-m0", "qwen-server-r3-m0");

    @RegisterExtension
    final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");

    private final KubernetesClient client = sim.client();
    private final FakeRouter router = sim.router();
    private final List<LoadGenerator> loads = new ArrayList<>();

    @AfterEach
    void stop() {
        loads.forEach(LoadGenerator::close);
    }

    private Optional<ModelDeploymentStatus> status() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
        return Optional.ofNullable(md).map(ModelDeployment::getStatus);
    }

    private List<RetirementStatus> retirements() {
        return status().map(ModelDeploymentStatus::retirements).orElse(List.of());
    }

    /** Four replicas behind the router; the two that stay carry two long requests each, so the choice takes r2 and r3. */
    private void deployFourWithTheHighestLeastBusy(SimOperator operator) {
        client.resource(deployment("qwen", "vLLM")
                        .namespace(NS)
                        .router("llm-d-router")
                        .role(role("server").replicas(4))
                        .build())
                .create();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> STAYING.stream().allMatch(router::selects)
                        && LEAVING.stream().allMatch(router::selects));
        for (String pod : STAYING) {
            FakeEngine engine = sim.world().kubelet().engine(NS, pod).orElseThrow();
            LoadGenerator busy = new LoadGenerator(
                    () -> Optional.of(new RouteTarget(pod, engine.uri(""))), 2, 600, Duration.ofMillis(100));
            loads.add(busy.start(Duration.ofSeconds(1)));
            await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() >= 2);
        }
    }

    /** One request of about {@code seconds} on each leaving replica, straight to its engine. */
    private List<CompletableFuture<LoadGenerator.Request>> holdTheLeavingOnes(int seconds) {
        List<CompletableFuture<LoadGenerator.Request>> requests = new ArrayList<>();
        for (String pod : LEAVING) {
            FakeEngine engine = sim.world().kubelet().engine(NS, pod).orElseThrow();
            LoadGenerator one = new LoadGenerator(
                    () -> Optional.of(new RouteTarget(pod, engine.uri(""))), 1, seconds * 10, Duration.ofMillis(100));
            loads.add(one);
            requests.add(CompletableFuture.supplyAsync(one::send));
            await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);
        }
        return requests;
    }

    /** Both leaving replicas under retirement at the same moment, each held by its own request. */
    private boolean bothHeldAtOnce() {
        Map<Integer, RetirementStatus> byOrdinal =
                retirements().stream().collect(Collectors.toMap(RetirementStatus::replicaOrdinal, r -> r, (a, b) -> a));
        return byOrdinal.keySet().equals(java.util.Set.of(2, 3))
                && byOrdinal.values().stream().allMatch(r -> "Draining".equals(r.state()) && "Busy".equals(r.reason()));
    }

    private boolean gone(String pod) {
        return client.pods().inNamespace(NS).withName(pod).get() == null;
    }

    @Test
    void aReductionByTwoHoldsBothAtOnceAndARestartResumesBoth() {
        SimOperator first = new SimOperator(client, sim.exec(), sim.routers());
        deployFourWithTheHighestLeastBusy(first);
        List<CompletableFuture<LoadGenerator.Request>> requests = holdTheLeavingOnes(8);

        Specs.scale(client, NS, "qwen", "server", 2);
        await().atMost(Duration.ofSeconds(30)).until(this::bothHeldAtOnce);
        assertThat(status().orElseThrow().retirementsSummary()).isEqualTo("2 Draining");
        assertThat(status().flatMap(s -> Conditions.find(s.conditions(), Conditions.RETIREMENT_PROGRESSING)))
                .hasValueSatisfying(c -> {
                    assertThat(c.getStatus()).isEqualTo("True");
                    assertThat(c.getReason()).as("the reason both share").isEqualTo("Busy");
                    assertThat(c.getMessage()).startsWith("2 retirements under way");
                });
        first.close();

        SimOperator second = new SimOperator(client, sim.exec(), sim.routers());
        try {
            await().atMost(Duration.ofSeconds(40))
                    .until(() -> LEAVING.stream().allMatch(this::gone)
                            && retirements().isEmpty());
        } finally {
            second.close();
        }
        assertThat(requests).allSatisfy(r -> assertThat(r.join().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(STAYING).noneMatch(this::gone);
        assertThat(RecordedEvents.occurrences(client, NS).stream()
                        .filter(e -> "RetirementStarted".equals(e.getReason())))
                .as("two operations, each resumed, no third")
                .hasSize(2);
    }

    @Test
    void scalingBackUpDuringTheRetirementsPutsBothBackInServiceAndCreatesNothing() {
        SimOperator operator = new SimOperator(client, sim.exec(), sim.routers());
        try {
            deployFourWithTheHighestLeastBusy(operator);
            Map<String, String> uids =
                    client.pods().inNamespace(NS).withLabel(Labels.ROLE, "server").list().getItems().stream()
                            .collect(Collectors.toMap(
                                    p -> p.getMetadata().getName(),
                                    p -> p.getMetadata().getUid()));
            holdTheLeavingOnes(30);

            Specs.scale(client, NS, "qwen", "server", 2);
            await().atMost(Duration.ofSeconds(30)).until(this::bothHeldAtOnce);
            await().atMost(Duration.ofSeconds(10)).until(() -> LEAVING.stream().noneMatch(router::selects));
            Specs.scale(client, NS, "qwen", "server", 4);

            await().atMost(Duration.ofSeconds(30))
                    .until(() -> LEAVING.stream().allMatch(router::selects)
                            && retirements().stream().noneMatch(r -> !"Aborted".equals(r.state())));
            List<Pod> servers = client.pods()
                    .inNamespace(NS)
                    .withLabel(Labels.ROLE, "server")
                    .list()
                    .getItems();
            assertThat(servers)
                    .extracting(p ->
                            p.getMetadata().getName() + "/" + p.getMetadata().getUid())
                    .as("the same four Pods, none created, none deleted")
                    .containsExactlyInAnyOrderElementsOf(uids.entrySet().stream()
                            .map(e -> e.getKey() + "/" + e.getValue())
                            .toList());
            assertThat(servers)
                    .allSatisfy(p ->
                            assertThat(p.getMetadata().getLabels()).containsEntry(Labels.SERVING, Labels.SERVING_YES));
        } finally {
            operator.close();
        }
    }
}
