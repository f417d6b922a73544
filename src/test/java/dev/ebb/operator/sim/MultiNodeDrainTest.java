package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replica of two Pods, leader and follower, whose engine runs one collective over both: what a deletion from
 * outside does to the leader's generations, with the hooks the operator renders.
 */
@EnableKubernetesMockClient(crud = true)
class MultiNodeDrainTest {
    private static final String NS = "sim";
    private static final String LEADER = "qwen-big-r0-m0";
    private static final String FOLLOWER = "qwen-big-r0-m1";
    /** 10 s of streaming: past the 5 s a follower's hook used to give, well inside the grace of 30. */
    private static final int TOKENS = 200;

    private static final Duration TOKEN_INTERVAL = Duration.ofMillis(50);
    private static final PodRenderer RENDERER = new PodRenderer();

    KubernetesClient client;

    @RegisterExtension
    final KubeletPerTest kubelets = new KubeletPerTest(() -> client);

    private static List<Pod> replica() {
        DesiredDeployment desired = Specs.deployment("qwen", "vLLM")
                .namespace(NS)
                .role(Specs.role("big").size(2))
                .desired();
        DesiredRole role = desired.roles().get(0);
        String hash = RENDERER.configHash(desired, role);
        return List.of(
                RENDERER.render(new MemberSlot(desired, role, 0, 0), hash),
                RENDERER.render(new MemberSlot(desired, role, 0, 1), hash));
    }

    private void create(List<Pod> pods) {
        pods.forEach(p -> client.resource(HookScriptMounts.provide(client, p)).create());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> kubelets.get()
                                .engine(NS, LEADER)
                                .filter(e -> e.state() == FakeEngine.State.SERVING)
                                .isPresent()
                        && running(FOLLOWER));
    }

    private boolean running(String name) {
        Pod pod = client.pods().inNamespace(NS).withName(name).get();
        return pod != null
                && pod.getStatus() != null
                && "Running".equals(pod.getStatus().getPhase());
    }

    private CompletableFuture<LoadGenerator.Request> streamOnTheLeader() {
        FakeEngine engine = kubelets.get().engine(NS, LEADER).orElseThrow();
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(LEADER, engine.uri(""))), 1, TOKENS, TOKEN_INTERVAL);
        CompletableFuture<LoadGenerator.Request> stream = CompletableFuture.supplyAsync(load::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);
        return stream;
    }

    private void delete(String name) {
        client.pods().inNamespace(NS).withName(name).delete();
    }

    private void awaitGone(String name) {
        await().atMost(Duration.ofSeconds(40))
                .until(() -> client.pods().inNamespace(NS).withName(name).get() == null);
    }

    private Termination terminationOf(String name) {
        return kubelets.get().terminations().stream()
                .filter(t -> t.pod().equals(name))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void aFollowerDeletedFromOutsideStaysUntilItsLeaderIsIdleAndTheLeadersGenerationEnds() throws Exception {
        create(replica());
        CompletableFuture<LoadGenerator.Request> stream = streamOnTheLeader();

        delete(FOLLOWER);
        awaitGone(FOLLOWER);

        assertThat(stream.get(5, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.COMPLETED);
        assertThat(terminationOf(FOLLOWER).hookOutput()).contains("idle on two consecutive reads");
        assertThat(terminationOf(FOLLOWER).hook().orElseThrow())
                .as("the follower's hook waited for the leader's stream")
                .isGreaterThan(Duration.ofSeconds(6));
    }

    @Test
    void aFollowerWhoseHookReadsItsOwnLoopbackStopsAfterFiveSecondsAndTakesTheLeadersGenerationDown() throws Exception {
        List<Pod> replica = replica();
        List<String> followerHook = replica.get(1)
                .getSpec()
                .getContainers()
                .get(0)
                .getLifecycle()
                .getPreStop()
                .getExec()
                .getCommand();
        followerHook.set(followerHook.indexOf("--host") + 1, EnginePod.LOOPBACK);
        create(replica);
        CompletableFuture<LoadGenerator.Request> stream = streamOnTheLeader();

        delete(FOLLOWER);
        awaitGone(FOLLOWER);

        assertThat(stream.get(5, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.CUT);
        assertThat(terminationOf(FOLLOWER).hookOutput()).contains("connection refused");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(client.pods()
                                .inNamespace(NS)
                                .withName(LEADER)
                                .get()
                                .getStatus()
                                .getContainerStatuses()
                                .get(0)
                                .getRestartCount())
                        .as("the leader's engine failed with its collective and restarted")
                        .isEqualTo(1));
    }

    @Test
    void aDrainedNodeTakingBothMembersLetsTheLeadersGenerationEndBeforeEitherStops() throws Exception {
        create(replica());
        CompletableFuture<LoadGenerator.Request> stream = streamOnTheLeader();

        delete(FOLLOWER);
        delete(LEADER);
        awaitGone(LEADER);
        awaitGone(FOLLOWER);

        assertThat(stream.get(5, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.COMPLETED);
        assertThat(terminationOf(LEADER).killed()).isFalse();
        assertThat(terminationOf(FOLLOWER).hookOutput())
                .containsAnyOf("idle on two consecutive reads", "connection refused");
    }

    @Test
    void aFollowersContainerRestartEndsTheLeadersGenerations() throws Exception {
        create(replica());
        CompletableFuture<LoadGenerator.Request> stream = streamOnTheLeader();

        kubelets.get().restartContainer(NS, FOLLOWER);

        assertThat(stream.get(5, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.CUT);
    }
}
