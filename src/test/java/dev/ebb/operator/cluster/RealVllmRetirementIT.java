package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.drain.EngineShutdown;
import dev.ebb.operator.engine.RealVllm;
import dev.ebb.operator.engine.Stream;
import dev.ebb.operator.sim.Termination;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A scale-down on the real control plane, by the packaged operator, of replicas whose engines are real vLLM processes
 * for CPU started from the very command the operator rendered: the operator's member reads (read-metrics.py and the
 * connection read, run by the node agent) see the real engine's pages and connections, the drain hook runs against
 * it, and the retired replica must be deleted only once its engine is idle, with no stream cut.
 */
class RealVllmRetirementIT {
    private static final String NS = "real-vllm";
    private static final String IMAGE = "vllm/vllm-openai:v" + RealVllm.RELEASE;
    private static ClusterWorld world;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeTrue(RealVllm.installed(), "make engine-env installs real vLLM first");
        world = ClusterWorld.start(NS, NS);
        admin = world.admin;
        world.node.kubelet().runEnginesWith(RealVllm.runtime());
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    @Test
    void aScaleDownDeletesTheRealEngineOnlyOnceItsStreamHasEndedAndCutsNothing() throws Exception {
        admin.resource(deployment("tiny", "vLLM").namespace(NS).engineImage(IMAGE).role(role("server").replicas(2).grace(90)
                // generation on 2 shared cores runs from 150 down to under 20 tokens a second: room for the slowest
                .drainSeconds(900))
                .scaling("server", 2).build()).create();
        await("two real engines loaded and Ready").atMost(Duration.ofMinutes(6)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() ->
                assertThat(readyPods()).as(ClusterState.describe(admin, NS)).hasSize(2));
        List<Pod> pods = readyPods();
        List<String> command = pods.get(0).getSpec().getContainers().get(0).getCommand();
        assertThat(command).as("rendered for the pinned release").contains(EngineShutdown.VLLM_FLAG);
        String model = command.get(command.indexOf("--served-model-name") + 1);

        // a long generation on each replica, so that whichever the operator takes away is busy when it chooses
        Map<String, CompletableFuture<Stream>> streams = new LinkedHashMap<>();
        Map<String, AtomicInteger> progress = new LinkedHashMap<>();
        for (Pod pod : pods) {
            String name = pod.getMetadata().getName();
            URI engine = URI.create("http://" + pod.getStatus().getPodIP() + ":" + pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort());
            progress.put(name, new AtomicInteger());
            streams.put(name, Stream.start(engine.resolve("/v1/completions"), model, RealVllm.prompt(3), 2000, progress.get(name)));
        }
        await("both streaming").atMost(Duration.ofSeconds(30)).until(() -> progress.values().stream().allMatch(p -> p.get() > 0));

        assertThat(world.kubectl("scale", "md/tiny", "--replicas=1", "-n", NS)).contains("scaled");

        await("a retirement under way").atMost(Duration.ofSeconds(30)).until(() -> !world.retirements("tiny").isEmpty());
        assertThat(streams.values()).as("every stream still running when the retirement began").noneMatch(CompletableFuture::isDone);
        await("one replica left, the retirement done").atMost(Duration.ofMinutes(15)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            assertThat(world.podsOf("tiny")).as(ClusterState.describe(admin, NS)).hasSize(1);
            assertThat(world.retirements("tiny")).isEmpty();
        });

        Map<String, Instant> endedAt = new LinkedHashMap<>();
        for (Map.Entry<String, CompletableFuture<Stream>> entry : streams.entrySet()) {
            Stream ended = entry.getValue().get(15, TimeUnit.MINUTES);
            assertThat(ended.complete()).as("the stream on %s: %s", entry.getKey(), ended).isTrue();
            endedAt.put(entry.getKey(), Instant.now().minusNanos(System.nanoTime() - ended.endedNanos()));
        }
        Termination retired = world.node.kubelet().terminations().stream().filter(t -> t.namespace().equals(NS)).findFirst().orElseThrow();
        System.out.printf("real vLLM retirement: %s deleted %.1f s after its stream ended; hook %s; exited %.1f s after the delete%n",
                retired.pod(), Duration.between(endedAt.get(retired.pod()), retired.deletionSeen()).toMillis() / 1000.0,
                retired.hook().map(h -> h.toMillis() / 1000.0 + " s").orElse("none"), retired.exited().toMillis() / 1000.0);
        assertThat(world.node.kubelet().terminations()).filteredOn(t -> t.namespace().equals(NS)).hasSize(1);
        assertThat(retired.deletionSeen()).as("deleted only after its own stream ended").isAfter(endedAt.get(retired.pod()));
        assertThat(retired.hookOutput()).as("the hook found the engine idle at once").contains("idle on two consecutive reads")
                .doesNotContain("busy");
        assertThat(retired.killed()).as("killed at the grace").isFalse();
    }

    private static List<Pod> readyPods() {
        return admin.pods().inNamespace(NS).withLabel(Labels.DEPLOYMENT, "tiny").withLabel(Labels.ROLE).list().getItems().stream()
                .filter(Readiness::isPodReady).toList();
    }
}
