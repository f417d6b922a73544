package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RouteTarget;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Replicas taken away under streaming load on the real control plane, by the packaged operator under its own RBAC:
 * the real scheduler places the Pods, the real API server runs graceful deletion, and the node agent runs each Pod's
 * preStop hook and signals as the kubelet does. No generation may be cut.
 */
class ClusterRetirementIT {
    private static final String NS = "retire";
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
    void kubectlDeletePodWhileItStreamsLetsTheStreamFinish() throws Exception {
        admin.resource(deployment("del", "vLLM").namespace(NS).role(role("server").replicas(2)).build()).create();
        await("two ready").atMost(Duration.ofSeconds(90)).untilAsserted(() ->
                assertThat(readyPods("del")).as(ClusterState.describe(admin, NS)).isEqualTo(2));
        Pod victim = admin.pods().inNamespace(NS).withName(Names.pod("del", "server", 0, 0)).get();
        URI engine = URI.create("http://" + victim.getStatus().getPodIP() + ":" + victim.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort());
        LoadGenerator stream = new LoadGenerator(() -> Optional.of(new RouteTarget(victim.getMetadata().getName(), engine)), 1, 150, Duration.ofMillis(100));
        CompletableFuture<LoadGenerator.Request> fifteenSeconds = CompletableFuture.supplyAsync(stream::send);
        await().atMost(Duration.ofSeconds(10)).until(() -> node.kubelet().engine(NS, victim.getMetadata().getName()).map(e -> e.inFlight() > 0).orElse(false));

        admin.pods().inNamespace(NS).withName(victim.getMetadata().getName()).delete();

        LoadGenerator.Request request = fifteenSeconds.get(60, TimeUnit.SECONDS);
        assertThat(request.outcome()).as(request.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        await("the Pod gone and replaced").atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            Pod now = admin.pods().inNamespace(NS).withName(victim.getMetadata().getName()).get();
            assertThat(now == null || !now.getMetadata().getUid().equals(victim.getMetadata().getUid())).as(ClusterState.describe(admin, NS)).isTrue();
            assertThat(readyPods("del")).isEqualTo(2);
        });
        assertThat(node.kubelet().terminations()).filteredOn(t -> t.pod().equals(victim.getMetadata().getName()))
                .singleElement().satisfies(t -> assertThat(t.killed()).isFalse());
    }

    private static long readyPods(String deployment) {
        List<Pod> pods = admin.pods().inNamespace(NS).withLabel(Labels.ROLE).list().getItems();
        return pods.stream().filter(p -> p.getMetadata().getName().startsWith(deployment + "-")).filter(Readiness::isPodReady).count();
    }
}
