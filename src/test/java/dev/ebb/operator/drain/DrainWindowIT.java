package dev.ebb.operator.drain;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimWorld;
import dev.ebb.operator.sim.Termination;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** `kubectl delete pod` on a replica under streaming load, in the test world, with the operator's real hook. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class DrainWindowIT {
    private static final String NS = "drain";
    private static final String POD = "qwen-server-r0-m0";

    @Inject
    KubernetesClient client;
    private SimWorld world;
    private FakeRouter router;

    @BeforeEach
    void start() {
        world = new SimWorld(client);
        router = FakeRouter.inFrontOf(client, NS, "qwen");
    }

    @AfterEach
    void stop() {
        router.close();
        world.close();
    }

    @Test
    void deletedPodFinishesEveryRequestItHoldsAndLeavesSixSecondsAfterTheDelete() throws Exception {
        client.resource(deployment("qwen", "vLLM").namespace(NS).role(role("server").grace(30)).build()).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> router.selects(POD));
        String uid = client.pods().inNamespace(NS).withName(POD).get().getMetadata().getUid();
        LoadGenerator load = new LoadGenerator(router, 3, 40, Duration.ofMillis(50)).start(Duration.ofSeconds(40));
        await().atMost(Duration.ofSeconds(5)).until(() -> load.count(LoadGenerator.Outcome.COMPLETED) >= 3);

        Instant deleted = Instant.now();
        client.pods().inNamespace(NS).withName(POD).delete();
        await().atMost(Duration.ofSeconds(30)).until(() -> gone(uid));
        Instant goneAt = Instant.now();
        load.stop(Duration.ofSeconds(10));

        List<LoadGenerator.Request> before = load.requests().stream().filter(r -> r.start().isBefore(deleted)).toList();
        assertThat(before).isNotEmpty().allSatisfy(r -> assertThat(r.outcome()).as(r.toString()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
        Instant lastEnd = before.stream().map(LoadGenerator.Request::end).max(Instant::compareTo).orElseThrow();
        assertThat(lastEnd).isAfter(deleted);

        Termination termination = world.kubelet().terminations().stream().filter(t -> t.namespace().equals(NS) && t.pod().equals(POD)).findFirst().orElseThrow();
        assertThat(termination.hook()).hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(5500), Duration.ofMillis(8000)));
        assertThat(termination.hookOutput()).contains("idle on two consecutive reads");
        assertThat(termination.killed()).isFalse();
        assertThat(Duration.between(deleted, goneAt)).isBetween(Duration.ofMillis(5500), Duration.ofMillis(9000));
        assertThat(Duration.between(lastEnd, goneAt)).isLessThan(Duration.ofSeconds(7));
    }

    private boolean gone(String uid) {
        Pod pod = client.pods().inNamespace(NS).withName(POD).get();
        return pod == null || !uid.equals(pod.getMetadata().getUid());
    }
}
