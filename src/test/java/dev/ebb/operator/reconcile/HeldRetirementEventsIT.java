package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.retire.Reason;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A replica held busy over many passes is told about once, not once a pass. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class HeldRetirementEventsIT {
    private static final String TARGET = "qwen-server-r1-m0";

    @Inject
    KubernetesClient client;

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    private final String ns = world.namespace("held-events");

    @Test
    void aReplicaHeldBusyForManyPassesIsAnnouncedOnce() {
        FakeRouter router = world.routerInFrontOf(ns, "qwen", RouterKind.LLM_D_ROUTER);
        client.resource(deployment("qwen", "vLLM")
                        .router(RouterKind.LLM_D_ROUTER.wireName())
                        .namespace(ns)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> router.selects("qwen-server-r0-m0") && router.selects(TARGET));
        FakeEngine engine = world.kubelet().engine(ns, TARGET).orElseThrow();
        // each read takes longer than the second between passes, as an exec into a loaded node can: about every other
        // pass finds its read still under way
        engine.faults().slowMetrics(Duration.ofMillis(1500));
        // about 15 s of streaming: some fifteen draining passes, each with a read that may or may not have landed
        // the replica that stays holds more, so the scale-down, which takes the fewest in flight, takes the target
        FakeEngine other = world.kubelet().engine(ns, "qwen-server-r0-m0").orElseThrow();
        new LoadGenerator(
                        () -> Optional.of(new RouteTarget("qwen-server-r0-m0", other.uri(""))),
                        2,
                        400,
                        Duration.ofMillis(100))
                .start(Duration.ofSeconds(1));
        await().atMost(Duration.ofSeconds(5)).until(() -> other.inFlight() >= 2);
        LoadGenerator held = new LoadGenerator(
                () -> Optional.of(new RouteTarget(TARGET, engine.uri(""))), 1, 150, Duration.ofMillis(100));
        CompletableFuture.runAsync(held::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);

        Specs.scale(client, ns, "qwen", "server", 1);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> client.pods().inNamespace(ns).withName(TARGET).get() == null);

        List<Event> told = RecordedEvents.occurrences(client, ns);
        assertThat(told)
                .filteredOn(e -> Reason.BUSY.wire().equals(e.getReason()))
                .hasSize(1);
        // awaiting the first read, then the first idle read of two: the hold's own changes, told once each
        assertThat(told)
                .filteredOn(e -> Reason.AWAITING_READS.wire().equals(e.getReason()))
                .hasSizeLessThanOrEqualTo(2);
        assertThat(held.requests())
                .singleElement()
                .satisfies(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
    }
}
