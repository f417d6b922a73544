package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

@EnableKubernetesMockClient(crud = true)
class SimKubeletTest {
    private static final PodRenderer RENDERER = new PodRenderer();

    static final String NS = "sim";
    KubernetesClient client;

    @RegisterExtension
    final KubeletPerTest kubelets = new KubeletPerTest(() -> client);

    static Pod enginePod(String name, Long grace, List<String> preStop) {
        return pod(
                name,
                "vllm",
                List.of("vllm", "serve", "m", "--served-model-name", "m", "--host", "0.0.0.0", "--port", "8000"),
                grace,
                preStop);
    }

    /** An SGLang Pod: on SIGTERM its engine keeps generating what it holds, so only the kill ends a long stream. */
    static Pod sglangPod(String name, Long grace, List<String> preStop) {
        return pod(
                name,
                "sglang",
                List.of(
                        "python3",
                        "-m",
                        "sglang.launch_server",
                        "--model-path",
                        "m",
                        "--served-model-name",
                        "m",
                        "--host",
                        "0.0.0.0",
                        "--port",
                        "8000",
                        "--enable-metrics"),
                grace,
                preStop);
    }

    private static Pod pod(String name, String image, List<String> command, Long grace, List<String> preStop) {
        PodBuilder pod = new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(NS)
                .endMetadata()
                .withNewSpec()
                .withTerminationGracePeriodSeconds(grace)
                .addNewContainer()
                .withName("main")
                .withImage(image)
                .withCommand(command)
                .addNewPort()
                .withContainerPort(8000)
                .endPort()
                .endContainer()
                .endSpec();
        if (preStop != null) {
            pod.editSpec()
                    .editFirstContainer()
                    .withNewLifecycle()
                    .withNewPreStop()
                    .withNewExec()
                    .withCommand(preStop)
                    .endExec()
                    .endPreStop()
                    .endLifecycle()
                    .endContainer()
                    .endSpec();
        }
        return pod.build();
    }

    /** A Pod the operator's renderer builds for the only role of the given deployment. */
    private static Pod rendered(Specs.Deployment spec) {
        DesiredDeployment desired = spec.namespace(NS).desired();
        DesiredRole role = desired.roles().get(0);
        return RENDERER.render(new MemberSlot(desired, role, 0, 0), RENDERER.configHash(desired, role));
    }

    /** Starts one stream far longer than any test here lasts and returns once the Pod's engine holds it. */
    private CompletableFuture<LoadGenerator.Request> holdStream(String name) {
        FakeEngine engine = kubelets.get().engine(NS, name).orElseThrow();
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(name, engine.uri(""))), 1, 1000, Duration.ofMillis(20));
        CompletableFuture<LoadGenerator.Request> held = CompletableFuture.supplyAsync(load::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);
        return held;
    }

    private static LoadGenerator.Outcome outcome(CompletableFuture<LoadGenerator.Request> request) throws Exception {
        return request.get(5, TimeUnit.SECONDS).outcome();
    }

    private Pod fetch(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private void awaitRunning(String name) {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            Pod pod = fetch(name);
            assertThat(pod.getStatus()).isNotNull();
            assertThat(pod.getStatus().getPhase()).isEqualTo("Running");
        });
    }

    private Termination terminationOf(String name) {
        return kubelets.get().terminations().stream()
                .filter(t -> t.pod().equals(name))
                .findFirst()
                .orElseThrow();
    }

    /** A container that runs no engine and declares no port (the cluster tier's plain Pods) still runs. */
    @Test
    void aPlainContainerWithoutPortsOrCommandRunsWithoutAnEngine() {
        client.resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("shell")
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("main")
                        .withImage("busybox")
                        .endContainer()
                        .endSpec()
                        .build())
                .create();

        awaitRunning("shell");
        assertThat(kubelets.get().engine(NS, "shell")).isEmpty();
    }

    @Test
    void bindsThePodReportsItReadyAndStartsItsEngine() {
        client.resource(enginePod("a", null, null)).create();

        awaitRunning("a");
        Pod pod = fetch("a");
        assertThat(pod.getMetadata().getFinalizers()).contains(SimKubelet.FINALIZER);
        assertThat(pod.getStatus().getPodIP()).startsWith("127.0.");
        assertThat(pod.getStatus().getConditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("Ready");
            assertThat(c.getStatus()).isEqualTo("True");
        });
        assertThat(pod.getStatus().getContainerStatuses()).singleElement().satisfies(c -> {
            assertThat(c.getContainerID()).startsWith("sim://");
            assertThat(c.getRestartCount()).isZero();
            assertThat(c.getState().getRunning().getStartedAt()).isNotNull();
        });
        assertThat(kubelets.get().engine(NS, "a"))
                .hasValueSatisfying(
                        e -> assertThat(e.host()).isEqualTo(pod.getStatus().getPodIP()));
    }

    @Test
    void deleteLeavesThePodTerminatingUntilTheHookAndEngineAreDone() {
        client.resource(enginePod("b", 10L, List.of("python3", "-c", "import time; time.sleep(2)")))
                .create();
        awaitRunning("b");

        client.pods().inNamespace(NS).withName("b").delete();

        assertThat(fetch("b").getMetadata().getDeletionTimestamp()).isNotNull();
        await().atMost(Duration.ofSeconds(8)).until(() -> fetch("b") == null);
        Termination t = terminationOf("b");
        assertThat(t.hook())
                .hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(1900), Duration.ofMillis(3500)));
        assertThat(t.sigterm()).isGreaterThanOrEqualTo(t.hook().orElseThrow());
        assertThat(t.killed()).isFalse();
    }

    @Test
    void engineStillDrainingAtTheGraceIsKilledAndItsStreamCut() throws Exception {
        client.resource(sglangPod("g", 2L, null)).create();
        awaitRunning("g");
        CompletableFuture<LoadGenerator.Request> held = holdStream("g");

        client.pods().inNamespace(NS).withName("g").delete();

        await().atMost(Duration.ofSeconds(8)).until(() -> fetch("g") == null);
        Termination t = terminationOf("g");
        assertThat(t.sigterm()).isLessThan(Duration.ofMillis(500));
        assertThat(t.killed()).isTrue();
        assertThat(t.exited()).isBetween(Duration.ofMillis(1900), Duration.ofMillis(2800));
        assertThat(outcome(held)).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    @Test
    void hookThatOverrunsTheGraceIsCutAndTheEngineKilledTwoSecondsLater() throws Exception {
        client.resource(sglangPod("c", 3L, List.of("python3", "-c", "import time; time.sleep(30)")))
                .create();
        awaitRunning("c");
        CompletableFuture<LoadGenerator.Request> held = holdStream("c");

        client.pods().inNamespace(NS).withName("c").delete();

        await().atMost(Duration.ofSeconds(10)).until(() -> fetch("c") == null);
        Termination t = terminationOf("c");
        Duration hook = t.hook().orElseThrow();
        assertThat(hook).isBetween(Duration.ofMillis(2900), Duration.ofMillis(3800));
        assertThat(t.killed()).isTrue();
        assertThat(t.exited().minus(hook)).isBetween(Duration.ofMillis(1900), Duration.ofMillis(2600));
        assertThat(outcome(held)).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    @Test
    void hookThatEndsJustBeforeTheGraceStillLeavesTheEngineTwoSeconds() throws Exception {
        client.resource(sglangPod("h", 3L, List.of("python3", "-c", "import time; time.sleep(2.5)")))
                .create();
        awaitRunning("h");
        CompletableFuture<LoadGenerator.Request> held = holdStream("h");

        client.pods().inNamespace(NS).withName("h").delete();

        await().atMost(Duration.ofSeconds(10)).until(() -> fetch("h") == null);
        Termination t = terminationOf("h");
        Duration hook = t.hook().orElseThrow();
        assertThat(hook)
                .as("the hook ended on its own, inside the grace")
                .isBetween(Duration.ofMillis(2500), Duration.ofMillis(2990));
        assertThat(t.killed()).isTrue();
        assertThat(t.exited().minus(hook)).isBetween(Duration.ofMillis(1900), Duration.ofMillis(2600));
        assertThat(outcome(held)).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    @Test
    void podWithoutHookGetsSigtermAtOnce() {
        client.resource(enginePod("d", 30L, null)).create();
        awaitRunning("d");

        client.pods().inNamespace(NS).withName("d").delete();

        await().atMost(Duration.ofSeconds(5)).until(() -> fetch("d") == null);
        assertThat(terminationOf("d").sigterm()).isLessThan(Duration.ofMillis(500));
        assertThat(terminationOf("d").hook()).isEmpty();
    }

    @Test
    void hookRunsAgainstThePodsOwnAddressWithEveryOtherArgumentAsRendered() {
        List<String> hook = List.of(
                "python3",
                "-c",
                "import sys; sys.stderr.write(' | '.join(sys.argv[1:]))",
                "--host",
                "127.0.0.1",
                "--note",
                "127.0.0.1",
                "$(x)");
        client.resource(enginePod("e", 15L, hook)).create();
        awaitRunning("e");
        String address = fetch("e").getStatus().getPodIP();

        client.pods().inNamespace(NS).withName("e").delete();

        await().atMost(Duration.ofSeconds(5)).until(() -> fetch("e") == null);
        assertThat(terminationOf("e").hookOutput()).isEqualTo("--host | " + address + " | --note | 127.0.0.1 | $(x)");
    }

    @Test
    void hookRunsWithTheContainersLiteralEnvironmentAndWithoutWhatComesFromElsewhere() {
        List<String> hook = List.of(
                "python3",
                "-c",
                "import os, sys; sys.stderr.write(' | '.join(os.environ.get(n, '-') for n in ('http_proxy', 'FROM_SECRET')))");
        Pod pod = enginePod("env", 15L, hook);
        pod.getSpec()
                .getContainers()
                .get(0)
                .setEnv(List.of(
                        new EnvVar("http_proxy", "http://127.0.0.1:9", null),
                        new EnvVarBuilder()
                                .withName("FROM_SECRET")
                                .withNewValueFrom()
                                .withNewSecretKeyRef("key", "secret", false)
                                .endValueFrom()
                                .build()));
        client.resource(pod).create();
        awaitRunning("env");

        client.pods().inNamespace(NS).withName("env").delete();

        await().atMost(Duration.ofSeconds(5)).until(() -> fetch("env") == null);
        assertThat(terminationOf("env").hookOutput()).isEqualTo("http://127.0.0.1:9 | -");
    }

    @Test
    void restartGivesANewContainerIdAndCountsIt() throws Exception {
        client.resource(enginePod("f", null, null)).create();
        awaitRunning("f");
        String before = fetch("f").getStatus().getContainerStatuses().get(0).getContainerID();

        kubelets.get().restartContainer(NS, "f");

        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            var status = fetch("f").getStatus().getContainerStatuses().get(0);
            assertThat(status.getRestartCount()).isEqualTo(1);
            assertThat(status.getContainerID()).isNotEqualTo(before).startsWith("sim://");
        });
    }

    @Test
    void restartCutsTheStreamsTheEngineHeld() throws Exception {
        client.resource(sglangPod("i", null, null)).create();
        awaitRunning("i");
        CompletableFuture<LoadGenerator.Request> held = holdStream("i");

        kubelets.get().restartContainer(NS, "i");

        assertThat(outcome(held)).isEqualTo(LoadGenerator.Outcome.CUT);
        FakeEngine restarted = kubelets.get().engine(NS, "i").orElseThrow();
        assertThat(restarted.inFlight()).isZero();
        assertThat(restarted.state()).isEqualTo(FakeEngine.State.SERVING);
    }

    @Test
    void renderedHookReadsTheEngineOnThePortItsAnnotationsName() {
        // behind llm-d's routing proxy the engine, and so the scrape annotation, moves off the role's port
        Pod pod = rendered(Specs.deployment("qwen", "vLLM")
                .scaling("decode")
                .router("llm-d-router")
                .role(Specs.role("decode").kind("Decode").port(8000)));
        String scrapePort = pod.getMetadata().getAnnotations().get(Annotations.SCRAPE_PORT);
        assertThat(scrapePort).isNotEqualTo("8000");
        String name = pod.getMetadata().getName();
        client.resource(HookScriptMounts.provide(client, pod)).create();
        awaitRunning(name);
        assertThat(kubelets.get().engine(NS, name))
                .hasValueSatisfying(e -> assertThat(e.port()).isEqualTo(Integer.parseInt(scrapePort)));

        client.pods().inNamespace(NS).withName(name).delete();

        await().atMost(Duration.ofSeconds(15)).until(() -> fetch(name) == null);
        Termination t = terminationOf(name);
        assertThat(t.hookOutput()).contains("read: idle (sum 0), 2 in a row").contains("idle on two consecutive reads");
        assertThat(t.killed()).isFalse();
    }

    @Test
    void podWhoseAnnotationsSayHttpsGetsATlsEngineThatTheRenderedHookReads() {
        Pod pod = rendered(Specs.deployment("secure", "vLLM")
                .role(Specs.role("server")
                        .extraArgs("--ssl-certfile", "/tls/tls.crt", "--ssl-keyfile", "/tls/tls.key")));
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(Annotations.SCRAPE_SCHEME, "https");
        String name = pod.getMetadata().getName();
        client.resource(HookScriptMounts.provide(client, pod)).create();
        awaitRunning(name);
        assertThat(kubelets.get().engine(NS, name))
                .hasValueSatisfying(
                        e -> assertThat(e.uri("/metrics").getScheme()).isEqualTo("https"));

        client.pods().inNamespace(NS).withName(name).delete();

        await().atMost(Duration.ofSeconds(15)).until(() -> fetch(name) == null);
        assertThat(terminationOf(name).hookOutput())
                .contains("idle on two consecutive reads")
                .doesNotContain("TLS handshake failed");
    }

    @Test
    void followersAndTakeOverCommandsRunNoEngine() {
        assertThat(CommandedEngine.engineOf(List.of("vllm", "serve", "m", "--headless")))
                .isEmpty();
        assertThat(CommandedEngine.engineOf(List.of("python3", "-m", "sglang.launch_server", "--node-rank", "1")))
                .isEmpty();
        assertThat(CommandedEngine.engineOf(List.of("python3", "-m", "sglang.launch_server", "--node-rank", "0")))
                .isPresent();
        assertThat(CommandedEngine.engineOf(List.of("/bin/my-engine"))).isEmpty();
    }
}
