package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.LoadGenerator;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * `kubectl drain` of the Node the replicas run on, for a role that leaves node maintenance to evictions
 * ({@code nodeMaintenance: Evict}): kubectl cordons it and evicts every Pod through the eviction API, which deletes
 * each gracefully, so the drain window is all that stands between a stream and the cut. A Node of its own, since the
 * drain takes everything on it. {@link ClusterNodeMaintenanceIT} drains Nodes under the default, Protocol.
 */
class ClusterNodeDrainIT {
    private static final String NS = "drain";
    private static ClusterWorld world;
    private static KubernetesClient admin;
    private static ClusterNode node;

    @BeforeAll
    static void start() throws Exception {
        world = ClusterWorld.start(NS, NS);
        admin = world.admin;
        node = world.node;
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    @Test
    void kubectlDrainEvictsTheReplicasWithoutCuttingTheStreamAndTheyComeBackOnUncordon() throws Exception {
        admin.resource(deployment("evict", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2).disruption(2, "Evict"))
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(readyPods())
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        Pod streaming = admin.pods()
                .inNamespace(NS)
                .withName(Names.pod("evict", "server", 0, 0))
                .get();
        LoadGenerator stream = new LoadGenerator(ClusterWorld.straightTo(streaming), 1, 120, Duration.ofMillis(100));
        CompletableFuture<LoadGenerator.Request> twelveSeconds = CompletableFuture.supplyAsync(stream::send);
        await("streaming")
                .atMost(Duration.ofSeconds(10))
                .until(() -> node.kubelet()
                        .engine(NS, streaming.getMetadata().getName())
                        .map(e -> e.inFlight() > 0)
                        .orElse(false));

        String drained = world.kubectl("drain", node.name(), "--ignore-daemonsets", "--timeout=120s");

        assertThat(drained).contains("evicted").contains("drained");
        LoadGenerator.Request request = twelveSeconds.get(60, TimeUnit.SECONDS);
        assertThat(request.outcome()).as(request.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("evict-"))
                .hasSize(2)
                .allSatisfy(
                        t -> assertThat(t.killed()).as("killed at the grace").isFalse());
        // the operator puts the replicas back, and on a cordoned Node they wait to be scheduled
        await("replacements pending")
                .atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(world.podsOf("evict"))
                        .as(ClusterState.describe(admin, NS))
                        .hasSize(2)
                        .allSatisfy(p -> assertThat(p.getSpec().getNodeName()).isNull()));

        world.kubectl("uncordon", node.name());

        await("two ready again")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(readyPods())
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
    }

    private static long readyPods() {
        return world.podsOf("evict").stream().filter(Readiness::isPodReady).count();
    }
}
