package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.drain.EngineShutdown;
import dev.ebb.operator.engine.RealEngine;
import dev.ebb.operator.engine.RealSglang;
import dev.ebb.operator.engine.RealVllm;
import dev.ebb.operator.engine.Stream;
import dev.ebb.operator.sim.EngineContainer;
import dev.ebb.operator.sim.Termination;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A scale-down on the real control plane, by the packaged operator, of replicas whose engines are real vLLM or SGLang
 * processes for CPU started from the very command the operator rendered: the operator's member reads (read-metrics.py
 * and the connection read, run by the node agent) see the real engine's pages and connections, the drain hook runs
 * against it, and the retired replica must be deleted only once its engine is idle, with no stream cut.
 */
class RealEngineRetirementIT {
    private static final String NS = "real-engines";
    private static ClusterWorld world;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeTrue(
                RealVllm.installed() || RealSglang.installed(), "make engine-env installs the real engines first");
        world = ClusterWorld.start(NS, NS);
        admin = world.admin;
        // each runtime starts only the engine its Pods render, and a test whose engine is not installed creates none
        world.node.kubelet().runEnginesWith((pod, address) -> {
            Optional<EngineContainer> vllm = RealVllm.runtime().start(pod, address);
            return vllm.isPresent() ? vllm : RealSglang.runtime().start(pod, address);
        });
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    @Test
    void aScaleDownDeletesTheRealVllmOnlyOnceItsStreamHasEndedAndCutsNothing() throws Exception {
        Assumptions.assumeTrue(RealVllm.installed(), "make engine-env installs real vLLM first");
        List<Pod> pods = twoReadyReplicas("tiny-vllm", "vLLM", "vllm/vllm-openai:v" + RealVllm.RELEASE);
        assertThat(pods.get(0).getSpec().getContainers().get(0).getCommand())
                .as("rendered for the pinned release")
                .contains(EngineShutdown.VLLM_FLAG);
        retireOneWhileBothStream("tiny-vllm", pods, 2000);
    }

    /** Its gauges show a finished request for up to 30 s more, so the retirement waits that much longer; it cuts nothing. */
    @Test
    void aScaleDownDeletesTheRealSglangOnlyOnceItsStreamHasEndedAndCutsNothing() throws Exception {
        Assumptions.assumeTrue(RealSglang.installed(), "make engine-env installs real SGLang first");
        retireOneWhileBothStream(
                "tiny-sglang",
                twoReadyReplicas("tiny-sglang", "SGLang", "lmsysorg/sglang:v" + RealSglang.RELEASE),
                300);
    }

    /**
     * The sample the installing guide's "Trying it on kind" applies, as it is (but for its namespace), run by real vLLM for CPU
     * from the very command and environment the operator renders for it: only the model is this machine's tiny one,
     * since the sample's comes from a model hub this machine cannot reach.
     */
    @Test
    void theKindSampleLoadsOnRealVllmForCpuAndAnswers() throws Exception {
        Assumptions.assumeTrue(RealVllm.installed(), "make engine-env installs real vLLM first");
        ModelDeployment sample = Serialization.unmarshal(
                Files.readString(Path.of("src/main/kubernetes/samples/vllm-cpu-kind.yaml")), ModelDeployment.class);
        sample.getMetadata().setNamespace(NS);
        admin.resource(sample).create();
        try {
            await("the sample's engine loaded and Ready")
                    .atMost(Duration.ofMinutes(6))
                    .pollInterval(Duration.ofSeconds(2))
                    .untilAsserted(() -> assertThat(readyPods("tiny"))
                            .as(ClusterState.describe(admin, NS))
                            .hasSize(1));
            Pod pod = readyPods("tiny").get(0);
            Container main = pod.getSpec().getContainers().get(0);
            assertThat(main.getImagePullPolicy()).isEqualTo("IfNotPresent");
            assertThat(main.getCommand()).containsSubsequence("--max-model-len", "2048");
            assertThat(main.getEnv())
                    .anySatisfy(e -> assertThat(List.of(e.getName(), e.getValue()))
                            .containsExactly("VLLM_CPU_KVCACHE_SPACE", "2"));
            String model = main.getCommand().get(main.getCommand().indexOf("--served-model-name") + 1);
            URI engine = URI.create("http://" + pod.getStatus().getPodIP() + ":"
                    + main.getPorts().get(0).getContainerPort());

            Stream answer = Stream.start(
                            engine.resolve("/v1/completions"), model, RealEngine.prompt(1), 16, new AtomicInteger())
                    .get(3, TimeUnit.MINUTES);

            assertThat(answer.complete()).as(answer.toString()).isTrue();
            assertThat(model).isEqualTo("Qwen/Qwen2.5-0.5B-Instruct");
        } finally {
            admin.resource(sample).delete();
            await("the sample gone")
                    .atMost(Duration.ofMinutes(2))
                    .until(() -> world.podsOf("tiny").isEmpty());
        }
    }

    private static List<Pod> twoReadyReplicas(String name, String engine, String image) {
        admin.resource(deployment(name, engine)
                        .namespace(NS)
                        .engineImage(image)
                        .role(role("server")
                                .replicas(2)
                                .grace(90)
                                // generation on 2 shared cores runs from 150 down to under 20 tokens a second: room for
                                // the slowest
                                .drainSeconds(900))
                        .scaling("server", 2)
                        .build())
                .create();
        await("two real engines loaded and Ready")
                .atMost(Duration.ofMinutes(6))
                .pollInterval(Duration.ofSeconds(2))
                .untilAsserted(() -> assertThat(readyPods(name))
                        .as(ClusterState.describe(admin, NS))
                        .hasSize(2));
        return readyPods(name);
    }

    private static void retireOneWhileBothStream(String name, List<Pod> pods, int tokens) throws Exception {
        List<String> command = pods.get(0).getSpec().getContainers().get(0).getCommand();
        String model = command.get(command.indexOf("--served-model-name") + 1);
        // a long generation on each replica, so that whichever the operator takes away is busy when it chooses
        Map<String, CompletableFuture<Stream>> streams = new LinkedHashMap<>();
        Map<String, AtomicInteger> progress = new LinkedHashMap<>();
        for (Pod pod : pods) {
            String podName = pod.getMetadata().getName();
            URI engine = URI.create("http://" + pod.getStatus().getPodIP() + ":"
                    + pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort());
            progress.put(podName, new AtomicInteger());
            streams.put(
                    podName,
                    Stream.start(
                            engine.resolve("/v1/completions"),
                            model,
                            RealEngine.prompt(3),
                            tokens,
                            progress.get(podName)));
        }
        await("both streaming")
                .atMost(Duration.ofSeconds(60))
                .until(() -> progress.values().stream().allMatch(p -> p.get() > 0));

        assertThat(world.kubectl("scale", "md/" + name, "--replicas=1", "-n", NS))
                .contains("scaled");

        await("a retirement under way")
                .atMost(Duration.ofSeconds(30))
                .until(() -> !world.retirements(name).isEmpty());
        assertThat(streams.values())
                .as("every stream still running when the retirement began")
                .noneMatch(CompletableFuture::isDone);
        await("one replica left, the retirement done")
                .atMost(Duration.ofMinutes(15))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> {
                    assertThat(world.podsOf(name))
                            .as(ClusterState.describe(admin, NS))
                            .hasSize(1);
                    assertThat(world.retirements(name)).isEmpty();
                });

        Map<String, Instant> endedAt = new LinkedHashMap<>();
        for (Map.Entry<String, CompletableFuture<Stream>> entry : streams.entrySet()) {
            Stream ended = entry.getValue().get(15, TimeUnit.MINUTES);
            assertThat(ended.complete())
                    .as("the stream on %s: %s", entry.getKey(), ended)
                    .isTrue();
            endedAt.put(entry.getKey(), Instant.now().minusNanos(System.nanoTime() - ended.endedNanos()));
        }
        List<Termination> terminations = world.node.kubelet().terminations().stream()
                .filter(t -> t.pod().startsWith(name + "-"))
                .toList();
        assertThat(terminations).hasSize(1);
        Termination retired = terminations.get(0);
        System.out.printf(
                "%s retirement: %s deleted %.1f s after its stream ended; hook %s; exited %.1f s after the delete%n",
                name,
                retired.pod(),
                Duration.between(endedAt.get(retired.pod()), retired.deletionSeen())
                                .toMillis()
                        / 1000.0,
                retired.hook().map(h -> h.toMillis() / 1000.0 + " s").orElse("none"),
                retired.exited().toMillis() / 1000.0);
        assertThat(retired.deletionSeen())
                .as("deleted only after its own stream ended")
                .isAfter(endedAt.get(retired.pod()));
        assertThat(retired.hookOutput())
                .as("the hook found the engine idle at once")
                .contains("idle on two consecutive reads")
                .doesNotContain("busy");
        assertThat(retired.killed()).as("killed at the grace").isFalse();
    }

    private static List<Pod> readyPods(String name) {
        return admin
                .pods()
                .inNamespace(NS)
                .withLabel(Labels.DEPLOYMENT, name)
                .withLabel(Labels.ROLE)
                .list()
                .getItems()
                .stream()
                .filter(Readiness::isPodReady)
                .toList();
    }
}
