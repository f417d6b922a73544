package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimClock;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replica of two Pods of which the scheduler places one and finds no room for the other: told, then released whole
 * once it has held its node for the role's bound, created again behind a scheduling gate, and let go to the scheduler
 * once as long again has passed. The bound is reached by moving the operator's clock.
 */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class PartialPlacementIT {
    private static final Duration CONVERGE = Duration.ofSeconds(30);
    private static final int BOUND_SECONDS = 60;
    /** What kube-scheduler v1.37.2 wrote on the waiting member in the cluster tier. */
    private static final String FULL =
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available:"
                    + " 1 No preemption victims found for incoming pod.";

    private static final String LEADER = Names.pod("big", "tp", 0, 0);
    private static final String FOLLOWER = Names.pod("big", "tp", 0, 1);

    @Inject
    KubernetesClient client;

    @Inject
    SimClock clock;

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    private final String ns = world.namespace("placement");

    @Test
    void aReplicaHoldingItsNodeInPartIsReleasedWholeHeldBackAsLongAndThenPlaced() {
        world.kubelet().leaveUnplaced(pod -> FOLLOWER.equals(pod.getMetadata().getName()), FULL);
        client.resource(deployment("big", "SGLang")
                        .namespace(ns)
                        .role(role("tp").size(2).partialPlacementSeconds(BOUND_SECONDS))
                        .build())
                .create();

        await("the replica told partly scheduled").atMost(CONVERGE).untilAsserted(() -> {
            assertThat(events("ReplicaPartlyScheduled"))
                    .singleElement()
                    .satisfies(message -> assertThat(message)
                            .startsWith("replica 0 of role tp is partly scheduled: " + LEADER
                                    + " on sim-node hold their nodes' accelerators while " + FOLLOWER
                                    + " cannot be placed (" + FULL + ")"));
            assertThat(tp().partlyScheduled()).isEqualTo(1);
        });
        String leaderUid = pod(LEADER).getMetadata().getUid();
        assertThat(events("PartlyPlacedReplicaReleased"))
                .as("released before its bound")
                .isEmpty();

        clock.advance(Duration.ofSeconds(BOUND_SECONDS + 1));
        nudge(LEADER);

        await("released and created again behind the gate").atMost(CONVERGE).untilAsserted(() -> {
            assertThat(events("PartlyPlacedReplicaReleased"))
                    .singleElement()
                    .satisfies(message -> assertThat(message)
                            .startsWith("replica 0 of role tp held " + LEADER + " on sim-node for ")
                            .contains(" while " + FOLLOWER
                                    + " could not be placed; its Pods are deleted, giving those accelerators back, and created again held back"
                                    + " from the scheduler for 60 s"));
            List<Pod> recreated = List.of(pod(LEADER), pod(FOLLOWER));
            assertThat(recreated).allSatisfy(p -> {
                assertThat(p.getMetadata().getDeletionTimestamp()).isNull();
                assertThat(p.getSpec().getSchedulingGates())
                        .extracting(g -> g.getName())
                        .containsExactly(HeldBack.GATE);
                assertThat(Instant.parse(p.getMetadata().getAnnotations().get(HeldBack.UNTIL)))
                        .isAfter(clock.instant());
                assertThat(p.getSpec().getNodeName())
                        .as("placed while held back")
                        .isNull();
            });
            assertThat(recreated.get(0).getMetadata().getUid()).isNotEqualTo(leaderUid);
            assertThat(tp().heldBack()).isEqualTo(2);
            assertThat(tp().partlyScheduled()).isZero();
        });

        world.kubelet().placeEverything();
        await("held back, room or not, until its time")
                .during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(List.of(pod(LEADER), pod(FOLLOWER)))
                        .allSatisfy(p -> assertThat(p.getSpec().getNodeName()).isNull()));
        clock.advance(Duration.ofSeconds(BOUND_SECONDS + 1));
        nudge(LEADER);

        await("let go to the scheduler, placed and serving").atMost(CONVERGE).untilAsserted(() -> {
            assertThat(List.of(pod(LEADER), pod(FOLLOWER))).allSatisfy(p -> {
                assertThat(p.getSpec().getSchedulingGates()).isNullOrEmpty();
                assertThat(p.getSpec().getNodeName()).isEqualTo("sim-node");
            });
            assertThat(Readiness.isPodReady(pod(LEADER))).isTrue();
            assertThat(tp().heldBack()).isZero();
            assertThat(tp().ready()).isEqualTo(1);
        });
        assertThat(events("PartlyPlacedReplicaReleased"))
                .as("released again once placed whole")
                .hasSize(1);
    }

    private List<String> events(String reason) {
        return RecordedEvents.occurrences(client, ns).stream()
                .filter(e -> reason.equals(e.getReason()))
                .map(e -> e.getMessage())
                .toList();
    }

    private RoleStatus tp() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(ns)
                .withName("big")
                .get();
        assertThat(md.getStatus()).isNotNull();
        return md.getStatus().roles().stream()
                .filter(r -> "tp".equals(r.name()))
                .findFirst()
                .orElseThrow();
    }

    private Pod pod(String name) {
        Pod pod = client.pods().inNamespace(ns).withName(name).get();
        assertThat(pod).as(name + " exists").isNotNull();
        return pod;
    }

    /** Any change to one of its Pods brings the operator a pass, as the clock moving does not. */
    private void nudge(String name) {
        client.pods().inNamespace(ns).withName(name).edit(p -> {
            p.getMetadata()
                    .setAnnotations(new java.util.HashMap<>(
                            Objects.requireNonNullElse(p.getMetadata().getAnnotations(), Map.of())));
            p.getMetadata().getAnnotations().put("test.ebb.dev/nudge", Long.toString(System.nanoTime()));
            return p;
        });
    }
}
