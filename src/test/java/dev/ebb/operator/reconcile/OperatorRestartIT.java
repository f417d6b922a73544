package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.RoutedSimWorld;
import dev.ebb.operator.sim.SimOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator stopped in the middle of a drain and started again, as a new process would be: nothing in memory
 * survives, only what status.retirement recorded. The second operator resumes the same operation.
 */
class OperatorRestartIT {
    private static final String NS = "restart";
    private static final String TARGET = "qwen-server-r1-m0";

    @RegisterExtension
    final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");

    private final KubernetesClient client = sim.client();
    private final FakeRouter router = sim.router();

    private Optional<RetirementStatus> retirement() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
        return Optional.ofNullable(md)
                .map(ModelDeployment::getStatus)
                .flatMap(s -> s.retirements() == null
                        ? Optional.empty()
                        : s.retirements().stream().findFirst());
    }

    @Test
    void aRestartDuringTheDrainResumesTheSameRetirement() {
        SimOperator first = new SimOperator(client, sim.exec(), sim.routers());
        client.resource(deployment("qwen", "vLLM")
                        .namespace(NS)
                        .router("llm-d-router")
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await().atMost(Duration.ofSeconds(30)).until(() -> router.selects(TARGET));
        FakeEngine engine = sim.world().kubelet().engine(NS, TARGET).orElseThrow();
        // the replica that stays holds more, so the scale-down, which takes the fewest in flight, takes the target
        FakeEngine other = sim.world().kubelet().engine(NS, "qwen-server-r0-m0").orElseThrow();
        new LoadGenerator(
                        () -> Optional.of(new RouteTarget("qwen-server-r0-m0", other.uri(""))),
                        2,
                        400,
                        Duration.ofMillis(100))
                .start(Duration.ofSeconds(1));
        await().atMost(Duration.ofSeconds(5)).until(() -> other.inFlight() >= 2);
        // 25 s: long enough that the operator reads the target busy before it ends, however loaded the machine (an
        // 8 s request was seen ending first at a load average of 5 on 2 cores)
        LoadGenerator held = new LoadGenerator(
                () -> Optional.of(new RouteTarget(TARGET, engine.uri(""))), 1, 250, Duration.ofMillis(100));
        CompletableFuture<LoadGenerator.Request> request = CompletableFuture.supplyAsync(held::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);

        Specs.scale(client, NS, "qwen", "server", 1);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> retirement().filter(r -> "Busy".equals(r.reason())).isPresent());
        first.close();

        // while no operator runs, nothing happens to the target
        request.join();
        assertThat(client.pods()
                        .inNamespace(NS)
                        .withName(TARGET)
                        .get()
                        .getMetadata()
                        .getDeletionTimestamp())
                .isNull();

        SimOperator second = new SimOperator(client, sim.exec(), sim.routers());
        try {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> client.pods().inNamespace(NS).withName(TARGET).get() == null);
            await().atMost(Duration.ofSeconds(10)).until(() -> retirement().isEmpty());
        } finally {
            second.close();
        }
        assertThat(request.join().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        List<String> starts = RecordedEvents.occurrences(client, NS).stream()
                .filter(e -> "RetirementStarted".equals(e.getReason()))
                .map(e -> e.getMessage())
                .toList();
        assertThat(starts).as("one operation, resumed, not a second one").hasSize(1);
        assertThat(client.v1().events().inNamespace(NS).list().getItems())
                .anyMatch(e -> "Completed".equals(e.getReason()));
    }
}
