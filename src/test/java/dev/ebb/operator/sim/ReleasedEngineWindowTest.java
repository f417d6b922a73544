package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Pods the operator renders, run by the kubelet as the engine release their image names would run. */
@EnableKubernetesMockClient(crud = true)
class ReleasedEngineWindowTest {
    private static final PodRenderer RENDERER = new PodRenderer();

    static final String NS = "sim";
    KubernetesClient client;
    private SimKubelet kubelet;

    @BeforeEach
    void start() {
        kubelet = new SimKubelet(client, new LoopbackAddresses());
    }

    @AfterEach
    void stop() {
        kubelet.close();
    }

    private static Pod rendered(Specs.Role role) {
        return rendered("vLLM", role);
    }

    private static Pod rendered(String engine, Specs.Role role) {
        DesiredDeployment desired =
                Specs.deployment("qwen", engine).role(role).namespace(NS).desired();
        DesiredRole only = desired.roles().get(0);
        return RENDERER.render(new MemberSlot(desired, only, 0, 0), RENDERER.configHash(desired, only));
    }

    private boolean ready(String name) {
        Pod pod = client.pods().inNamespace(NS).withName(name).get();
        return pod != null
                && pod.getStatus() != null
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c ->
                                c.getType().equals("Ready") && c.getStatus().equals("True"));
    }

    private boolean runningButNotReady(String name) {
        Pod pod = client.pods().inNamespace(NS).withName(name).get();
        return pod != null
                && pod.getStatus() != null
                && "Running".equals(pod.getStatus().getPhase())
                && !ready(name);
    }

    private String create(Pod pod) {
        client.resource(HookScriptMounts.provide(client, pod)).create();
        String name = pod.getMetadata().getName();
        await().atMost(Duration.ofSeconds(10)).until(() -> ready(name));
        return name;
    }

    private CompletableFuture<LoadGenerator.Request> stream(String name, double seconds) {
        FakeEngine engine = kubelet.engine(NS, name).orElseThrow();
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(name, engine.uri(""))),
                1,
                (int) (seconds * 1000 / 20),
                Duration.ofMillis(20));
        CompletableFuture<LoadGenerator.Request> held = CompletableFuture.supplyAsync(load::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);
        return held;
    }

    private Termination terminationOf(String name) {
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        kubelet.terminations().stream().anyMatch(t -> t.pod().equals(name)));
        return kubelet.terminations().stream()
                .filter(t -> t.pod().equals(name))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void aPodIsReadyOnlyOnceItsRenderedReadinessProbeFindsTheModelLoaded() {
        kubelet.loadDelay(Duration.ofSeconds(2));
        Pod pod = rendered(Specs.role("server").image("vllm/vllm-openai:v0.11.0"));
        assertThat(pod.getSpec().getContainers().get(0).getReadinessProbe().getHttpGet())
                .isNotNull();
        client.resource(HookScriptMounts.provide(client, pod)).create();
        String name = pod.getMetadata().getName();

        await().atMost(Duration.ofSeconds(5)).until(() -> runningButNotReady(name));
        FakeEngine engine = kubelet.engine(NS, name).orElseThrow();
        assertThat(engine.state()).isEqualTo(FakeEngine.State.LOADING);

        await().atMost(Duration.ofSeconds(5)).until(() -> ready(name));
        assertThat(engine.state()).isEqualTo(FakeEngine.State.SERVING);
    }

    /**
     * A stream that outlasts the hook's last read (grace 15: no read after 10 s) gets SIGTERM with the rest of the grace
     * still to run. A release before graceful shutdown cuts it there; from v0.18.0, given --shutdown-timeout, the
     * engine spends that rest on it: the operator renders the flag, or a role's extraArgs give their own.
     */
    static Stream<Arguments> streamsTheHookGaveUpOn() {
        return Stream.of(
                Arguments.of(
                        "vLLM before graceful shutdown cuts it at SIGTERM",
                        Specs.role("server").image("vllm/vllm-openai:v0.11.0").grace(15),
                        LoadGenerator.Outcome.CUT),
                Arguments.of(
                        "vLLM finishes it in the drain the operator rendered",
                        Specs.role("server").image("vllm/vllm-openai:v0.33.0").grace(15),
                        LoadGenerator.Outcome.COMPLETED),
                Arguments.of(
                        "vLLM finishes it in a drain the role set itself",
                        Specs.role("server")
                                .image("vllm/vllm-openai:v0.18.0")
                                .grace(15)
                                .extraArgs("--shutdown-timeout", "4"),
                        LoadGenerator.Outcome.COMPLETED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streamsTheHookGaveUpOn")
    void aStreamThatOutlastsTheHooksLastReadEndsAsTheReleaseDrains(
            String title, Specs.Role role, LoadGenerator.Outcome outcome) throws Exception {
        String name = create(rendered(role));
        CompletableFuture<LoadGenerator.Request> held = stream(name, 12.5);

        client.pods().inNamespace(NS).withName(name).delete();

        assertThat(held.get(30, TimeUnit.SECONDS).outcome()).isEqualTo(outcome);
        Termination t = terminationOf(name);
        assertThat(t.sigterm()).isBetween(Duration.ofSeconds(9), Duration.ofMillis(13_500));
        assertThat(t.killed()).isFalse();
    }
    /**
     * With the engines' exit after a drain as the engine tier saw it (vLLM 6 s, SGLang up to its watchdog's next 5 s
     * look and 4.4 s more), an idle replica's engine still leaves well within the default grace, unkilled.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("idleEnginesExitingAsObserved")
    void anIdleReplicasEngineExitingAsObservedLeavesWithinTheGraceUnkilled(
            String engine, Specs.Role role, Engine kind, Duration earliestExitAfterSigterm) {
        kubelet.shapeEngines((pod, behaviour) -> behaviour.timedAsObserved(kind));
        String name = create(rendered(engine, role));

        client.pods().inNamespace(NS).withName(name).delete();

        Termination t = terminationOf(name);
        assertThat(t.killed()).isFalse();
        assertThat(t.exited().minus(t.sigterm())).isGreaterThanOrEqualTo(earliestExitAfterSigterm);
        assertThat(t.exited()).isLessThan(Duration.ofSeconds(30));
    }

    static Stream<Arguments> idleEnginesExitingAsObserved() {
        return Stream.of(
                Arguments.of(
                        "vLLM",
                        Specs.role("server").image("vllm/vllm-openai:v0.33.0"),
                        Engine.VLLM,
                        Duration.ofSeconds(6)),
                Arguments.of(
                        "SGLang",
                        Specs.role("server").image("lmsysorg/sglang:v0.5.15"),
                        Engine.SGLANG,
                        Duration.ofMillis(4_400)));
    }
}
