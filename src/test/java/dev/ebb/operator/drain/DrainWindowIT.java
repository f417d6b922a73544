package dev.ebb.operator.drain;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.Termination;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** `kubectl delete pod` on a replica under streaming load, in the test world, with the operator's real hook. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class DrainWindowIT {
    private static final String POD = "qwen-server-r0-m0";

    @Inject
    KubernetesClient client;

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    private FakeRouter router;

    /** One vLLM replica with grace 30 in its own namespace, behind a router that selects it; returns the Pod's UID. */
    private String deploy(String namespace) {
        return deploy(namespace, null);
    }

    private String deploy(String namespace, List<EnvVar> env) {
        client.resource(deployment("qwen", "vLLM")
                        .namespace(namespace)
                        .role(role("server").grace(30).env(env))
                        .build())
                .create();
        router = world.closing(FakeRouter.inFrontOf(client, namespace, "qwen", RouterKind.LLM_D_ROUTER));
        await().atMost(Duration.ofSeconds(20)).until(() -> router.selects(POD));
        return client.pods()
                .inNamespace(namespace)
                .withName(POD)
                .get()
                .getMetadata()
                .getUid();
    }

    /** When the Pod was deleted and gone, and the requests that had started before the delete. */
    private record Deletion(Instant deleted, Instant goneAt, List<LoadGenerator.Request> startedBefore) {}

    private Deletion deleteAndWaitUntilGone(String ns, String uid, LoadGenerator load) throws InterruptedException {
        Instant deleted = Instant.now();
        client.pods().inNamespace(ns).withName(POD).delete();
        await().atMost(Duration.ofSeconds(30)).until(() -> gone(ns, uid));
        Instant goneAt = Instant.now();
        load.stop(Duration.ofSeconds(10));
        return new Deletion(
                deleted,
                goneAt,
                load.requests().stream()
                        .filter(r -> r.start().isBefore(deleted))
                        .toList());
    }

    private Termination termination(String ns) {
        return world.kubelet().terminations().stream()
                .filter(t -> t.namespace().equals(ns) && t.pod().equals(POD))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void deletedPodFinishesEveryRequestItHoldsAndLeavesSixSecondsAfterTheDelete() throws Exception {
        String ns = "drain";
        String uid = deploy(ns);
        LoadGenerator load = new LoadGenerator(router, 3, 40, Duration.ofMillis(50)).start(Duration.ofSeconds(40));
        await().atMost(Duration.ofSeconds(5)).until(() -> load.count(LoadGenerator.Outcome.COMPLETED) >= 3);

        Deletion deletion = deleteAndWaitUntilGone(ns, uid, load);
        Instant deleted = deletion.deleted();
        Instant goneAt = deletion.goneAt();
        List<LoadGenerator.Request> before = deletion.startedBefore();
        assertThat(before)
                .isNotEmpty()
                .allSatisfy(r -> assertThat(r.outcome()).as(r.toString()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
        Instant lastEnd = before.stream()
                .map(LoadGenerator.Request::end)
                .max(Instant::compareTo)
                .orElseThrow();
        assertThat(lastEnd).isAfter(deleted);

        Termination termination = termination(ns);
        assertThat(termination.hook())
                .hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(5500), Duration.ofMillis(8000)));
        assertThat(termination.hookOutput()).contains("idle on two consecutive reads");
        assertThat(termination.killed()).isFalse();
        assertThat(Duration.between(deleted, goneAt)).isBetween(Duration.ofMillis(5500), Duration.ofMillis(9000));
        // the last 2 s stream ends within about 2 s of the delete, and the Pod stays until the hook's idle return at 6
        // s
        assertThat(Duration.between(lastEnd, goneAt)).isBetween(Duration.ofMillis(2500), Duration.ofSeconds(7));
    }

    @Test
    void deletedPodHoldingLongStreamsWaitsForThemAndLeavesOneToTwoSecondsAfterTheLastEnds() throws Exception {
        String ns = "drain-long";
        String uid = deploy(ns);
        FakeEngine engine = world.kubelet().engine(ns, POD).orElseThrow();
        // streams of 10, 12.5 and 15 s at 50 ms a token; each client sends one, since its time limit has passed by its
        // end
        AtomicInteger sent = new AtomicInteger();
        LoadGenerator load = new LoadGenerator(
                        router, 3, () -> 200 + 50 * (sent.getAndIncrement() % 3), Duration.ofMillis(50))
                .start(Duration.ofMillis(500));
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 3);

        Deletion deletion = deleteAndWaitUntilGone(ns, uid, load);
        Instant deleted = deletion.deleted();
        Instant goneAt = deletion.goneAt();
        List<LoadGenerator.Request> before = deletion.startedBefore();
        assertThat(before)
                .hasSize(3)
                .allSatisfy(r -> assertThat(r.outcome()).as(r.toString()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
        Instant lastEnd = before.stream()
                .map(LoadGenerator.Request::end)
                .max(Instant::compareTo)
                .orElseThrow();
        assertThat(Duration.between(deleted, lastEnd)).isGreaterThan(Duration.ofSeconds(12));

        Termination termination = termination(ns);
        assertThat(termination.hookOutput()).contains(" read: busy (sum 3)").contains("idle on two consecutive reads");
        assertThat(termination.killed()).isFalse();
        Instant hookReturned =
                termination.deletionSeen().plus(termination.hook().orElseThrow());
        // the first read after the last stream ends comes within an interval, and the second one a second later
        assertThat(Duration.between(lastEnd, hookReturned))
                .as(termination.hookOutput())
                .isBetween(Duration.ofMillis(900), Duration.ofMillis(2500));
        assertThat(Duration.between(hookReturned, goneAt)).isBetween(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Test
    void proxyVariablesInTheEnginesEnvironmentDoNotKeepItsHookFromReadingIt() throws Exception {
        String ns = "drain-proxied";
        List<EnvVar> proxies = HookFixtures.PROXIES.entrySet().stream()
                .map(e -> new EnvVar(e.getKey(), e.getValue(), null))
                .toList();
        String uid = deploy(ns, proxies);
        FakeEngine engine = world.kubelet().engine(ns, POD).orElseThrow();
        LoadGenerator load = new LoadGenerator(router, 3, 160, Duration.ofMillis(50)).start(Duration.ofMillis(500));
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 3);

        Deletion deletion = deleteAndWaitUntilGone(ns, uid, load);

        assertThat(deletion.startedBefore())
                .hasSize(3)
                .allSatisfy(r -> assertThat(r.outcome()).as(r.toString()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
        Termination termination = termination(ns);
        assertThat(termination.hookOutput()).contains(" read: busy (sum 3)").contains("idle on two consecutive reads");
        assertThat(termination.killed()).isFalse();
    }

    private boolean gone(String namespace, String uid) {
        Pod pod = client.pods().inNamespace(namespace).withName(POD).get();
        return pod == null || !uid.equals(pod.getMetadata().getUid());
    }
}
