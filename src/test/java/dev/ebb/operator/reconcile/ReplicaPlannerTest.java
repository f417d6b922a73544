package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.retire.NextRetirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ReplicaPlannerTest {
    private static final PodRenderer RENDERER = new PodRenderer();
    private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");

    private static Map<String, String> hashes(DesiredDeployment d) {
        return d.roles().stream().collect(Collectors.toMap(DesiredRole::name, r -> RENDERER.configHash(d, r)));
    }

    private static ReplicaPlan plan(DesiredDeployment d, List<Pod> pods, List<String> services) {
        return ReplicaPlanner.plan(
                RENDERER, d, hashes(d), Inventory.of(pods), services, known(Map.of(), allIdle(Inventory.of(pods))));
    }

    private static ReplicaPlanner.Retirements known(
            Map<String, Set<Integer>> held, Map<String, Map<Integer, Reading>> readings) {
        return new ReplicaPlanner.Retirements(held, Map.of(), Map.of(), readings, true, false, Map.of(), NOW);
    }

    private static List<String> candidates(ReplicaPlan plan) {
        return plan.retirements().stream()
                .map(c -> c.role() + "/" + c.ordinal() + " " + c.purpose())
                .toList();
    }

    /** Every replica read idle: the choice among equals goes to the highest ordinal. */
    private static Map<String, Map<Integer, Reading>> allIdle(Inventory inventory) {
        Map<String, Map<Integer, Reading>> readings = new HashMap<>();
        inventory
                .byRole()
                .forEach((role, replicas) -> replicas.keySet()
                        .forEach(ordinal -> readings.computeIfAbsent(role, r -> new HashMap<>())
                                .put(ordinal, new Reading.Idle())));
        return readings;
    }

    private static List<String> names(List<Pod> pods) {
        return pods.stream().map(p -> p.getMetadata().getName()).toList();
    }

    @Test
    void emptyWorldGetsEveryReplicaAndTheRoleService() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();

        ReplicaPlan plan = plan(d, List.of(), List.of());

        assertThat(names(plan.create())).containsExactly("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
        assertThat(plan.services()).extracting(s -> s.getMetadata().getName()).containsExactly("qwen-server");
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void newReplicasTakeTheLowestFreeOrdinals() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(4)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        pods.addAll(ObservedPods.replica(d, "server", 1, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 3, hash, true));

        assertThat(names(plan(d, pods, List.of("qwen-server")).create()))
                .containsExactly("qwen-server-r0-m0", "qwen-server-r2-m0");
    }

    @Test
    void everyReplicaTakenAwayIsACandidateHighestOrdinalFirstAndNothingIsDeletedDirectly() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, hash, true));
        }

        ReplicaPlan plan = plan(d, pods, List.of("qwen-server"));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.neverRan()).isEmpty();
        assertThat(plan.retirements())
                .extracting(c -> c.role() + "/" + c.ordinal())
                .containsExactly("server/2", "server/1");
    }

    @Test
    void surplusAtTheCurrentConfigurationWaitsForOneReadOfEachThenTheIdlestLeaveAndAnUnreadableOneStays() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, hash, true));
        }

        ReplicaPlan unread = ReplicaPlanner.plan(
                RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of(), Map.of()));

        assertThat(unread.awaitingReads()).extracting(ObservedReplica::ordinal).containsExactly(0, 1, 2);
        assertThat(unread.retirements()).isEmpty();
        assertThat(unread.create()).isEmpty();

        ReplicaPlan read = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of("qwen-server"),
                known(
                        Map.of(),
                        Map.of(
                                "server",
                                Map.of(
                                        0,
                                        new Reading.Busy(1),
                                        1,
                                        new Reading.Busy(5),
                                        2,
                                        new Reading.Failed("exec refused")))));

        assertThat(read.awaitingReads()).isEmpty();
        assertThat(read.retirements())
                .extracting(c -> c.role() + "/" + c.ordinal())
                .containsExactly("server/0", "server/1");
        assertThat(read.retirements().get(0).chosenBecause())
                .isEqualTo("in flight 1, lowest of 3 read: r0 1, r1 5, r2 unreadable");
    }

    @Test
    void anOutdatedReplicaLeavesWithoutWaitingForAnyRead() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "server", 0, "old-hash", true));
        pods.addAll(ObservedPods.replica(d, "server", 1, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 2, hash, true));

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of(), Map.of()));

        assertThat(plan.awaitingReads()).isEmpty();
        assertThat(plan.retirements())
                .extracting(c -> c.role() + "/" + c.ordinal())
                .containsExactly("server/0");
    }

    @Test
    void surplusReplicasThatNeverRanGoDirectlyAndTheNextThatRanRetires() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        pods.addAll(ObservedPods.replica(d, "server", 0, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 1, hash, true));
        for (int ordinal = 2; ordinal < 4; ordinal++) {
            ObservedPods.replica(d, "server", ordinal, hash, true)
                    .forEach(p -> pods.add(new PodBuilder(p)
                            .withNewStatus()
                            .withPhase("Pending")
                            .endStatus()
                            .build()));
        }

        ReplicaPlan plan = plan(d, pods, List.of("qwen-server"));

        assertThat(names(plan.neverRan())).containsExactly("qwen-server-r3-m0", "qwen-server-r2-m0");
        assertThat(plan.retirements())
                .extracting(c -> c.role() + "/" + c.ordinal())
                .containsExactly("server/1");
        assertThat(plan.create()).isEmpty();
    }

    @Test
    void multiPodReplicaGetsEveryMemberAndAHeadlessService() {
        DesiredDeployment d = deployment("qwen", "SGLang")
                .role(role("big").size(3).replicas(2))
                .desired();

        ReplicaPlan plan = plan(d, List.of(), List.of());

        assertThat(names(plan.create()))
                .containsExactly(
                        "qwen-big-r0-m0",
                        "qwen-big-r0-m1",
                        "qwen-big-r0-m2",
                        "qwen-big-r1-m0",
                        "qwen-big-r1-m1",
                        "qwen-big-r1-m2");
        assertThat(plan.services())
                .extracting(s -> s.getMetadata().getName())
                .containsExactly("qwen-big", "qwen-big-r0", "qwen-big-r1");
    }

    @Test
    void vanishedMemberOfACurrentReplicaIsPutBack() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("big").size(2)).desired();
        List<Pod> pods =
                ObservedPods.replica(d, "big", 0, hashes(d).get("big"), true).subList(0, 1);

        assertThat(names(plan(d, pods, List.of()).create())).containsExactly("qwen-big-r0-m1");
    }

    @Test
    void aSurplusReplicaMissingAMemberIsNotRefilled() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("big").size(2).replicas(1)).desired();
        String hash = hashes(d).get("big");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "big", 0, hash, true));
        pods.add(ObservedPods.replica(d, "big", 1, hash, true).get(0));

        ReplicaPlan plan = plan(d, pods, List.of());

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements())
                .extracting(c -> c.role() + "/" + c.ordinal())
                .containsExactly("big/1");
    }

    @Test
    void aReplicaWithATerminatingMemberIsNotRefilled() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("big").size(2).replicas(2)).desired();
        String hash = hashes(d).get("big");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "big", 0, hash, true));
        pods.add(new PodBuilder(ObservedPods.replica(d, "big", 1, hash, true).get(0))
                .editMetadata()
                .withDeletionTimestamp("2026-01-01T00:00:00Z")
                .endMetadata()
                .build());

        assertThat(plan(d, pods, List.of()).create()).isEmpty();
    }

    @Test
    void aReplicaARetirementHoldsIsNotRefilledEvenWhenTheRoleWantsItAgain() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("big").size(2).replicas(2)).desired();
        String hash = hashes(d).get("big");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "big", 0, hash, true));
        pods.add(ObservedPods.replica(d, "big", 1, hash, true).get(0));

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of(),
                known(Map.of("big", Set.of(1)), allIdle(Inventory.of(pods))));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void aRolloutGoesOverTheReplicasThatStayAndLeavesAHeldOneToItsRetirement() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, "old-hash", true));
        }

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of("qwen-server"),
                known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(candidates(plan)).containsExactly("server/2 REDUCTION", "server/1 ROLLOUT");
        assertThat(plan.later()).containsExactly(new NextRetirement.Replica("server", 0));
        assertThat(plan.create()).isEmpty();
    }

    @Test
    void onceTheReplacedReplicaIsGoneItsSuccessorIsCreatedAndTheHeldOneStillLeaves() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "server", 0, "old-hash", true));
        pods.addAll(ObservedPods.replica(d, "server", 2, "old-hash", true));

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of("qwen-server"),
                known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(names(plan.create())).containsExactly("qwen-server-r1-m0");
        assertThat(candidates(plan)).containsExactly("server/2 REDUCTION");
    }

    @Test
    void aScaleUpKeepsAHeldReplica() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, hash, true));
        }

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of("qwen-server"),
                known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void aReplicaLostBesideAHeldOneAtTheCurrentConfigurationCallsTheRetirementOffInsteadOfStartingANewOne() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "server", 1, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 2, hash, true));

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of("qwen-server"),
                known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void outdatedReplicaIsLeftForItsRolloutAndNotRefilled() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("big").size(2)).desired();
        List<Pod> pods = ObservedPods.replica(d, "big", 0, "old-hash", true).subList(0, 1);

        assertThat(plan(d, pods, List.of()).create()).isEmpty();
    }

    @Test
    void servicesOfADroppedRoleStayUntilItsLastPodIsGone() {
        DesiredDeployment before = deployment("qwen", "vLLM")
                .role(role("a"))
                .role(role("b").size(2))
                .desired();
        DesiredDeployment after = deployment("qwen", "vLLM").role(role("a")).desired();
        List<Pod> bPods = ObservedPods.replica(before, "b", 0, "x", true);
        List<String> existing = List.of("qwen-a", "qwen-b", "qwen-b-r0", "qwen-b-r5");

        assertThat(plan(after, bPods, existing).obsoleteServices()).containsExactly("qwen-b-r5");
        assertThat(plan(after, List.of(), existing).obsoleteServices())
                .containsExactly("qwen-b", "qwen-b-r0", "qwen-b-r5");
    }

    @Test
    void podWithUnreadableLabelsIsAStrayAndNotAReplica() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        List<Pod> pods = new ArrayList<>();
        for (String bad : List.of("abc", "-1", "1e3", " 1", "99999999999999999999", "")) {
            Pod pod = ObservedPods.replica(d, "server", 0, hashes(d).get("server"), true)
                    .get(0);
            pods.add(new PodBuilder(pod)
                    .editMetadata()
                    .withName("bad-" + pods.size())
                    .addToLabels(Labels.REPLICA, bad)
                    .endMetadata()
                    .build());
        }

        Inventory inventory = Inventory.of(pods);

        assertThat(inventory.strays()).hasSize(6);
        assertThat(inventory.byRole()).isEmpty();
        assertThat(names(ReplicaPlanner.plan(RENDERER, d, hashes(d), inventory, List.of(), known(Map.of(), Map.of()))
                        .create()))
                .containsExactly("qwen-server-r0-m0");
    }

    @Test
    void roleServicesAreRenderedForEveryRoleEvenAtZeroReplicas() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("a").replicas(0))
                .role(role("b"))
                .desired();

        List<Service> services = plan(d, List.of(), List.of()).services();

        assertThat(services).extracting(s -> s.getMetadata().getName()).containsExactly("qwen-a", "qwen-b");
    }

    private static List<Pod> replicas(DesiredDeployment d, String hash, int... ordinals) {
        List<Pod> pods = new ArrayList<>();
        for (int ordinal : ordinals) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, hash, true));
        }
        return pods;
    }

    @Test
    void aRolloutRetiresTheOldReplicaBeforeItsReplacementIsCreated() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();

        ReplicaPlan first = plan(d, replicas(d, "old-hash", 0, 1, 2), List.of("qwen-server"));
        assertThat(candidates(first)).containsExactly("server/2 ROLLOUT");
        assertThat(first.create()).isEmpty();
        assertThat(first.retirements().get(0).chosenBecause())
                .contains("old-hash")
                .contains(hashes(d).get("server"));

        ReplicaPlan retiring = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(replicas(d, "old-hash", 0, 1, 2)),
                List.of("qwen-server"),
                new ReplicaPlanner.Retirements(
                        Map.of(), Map.of("server", Set.of(2)), Map.of(), Map.of(), true, false, Map.of(), NOW));
        assertThat(candidates(retiring)).as("the one under way, nothing else").containsExactly("server/2 ROLLOUT");
        assertThat(retiring.create()).isEmpty();

        ReplicaPlan gone = plan(d, replicas(d, "old-hash", 0, 1), List.of("qwen-server"));
        assertThat(names(gone.create())).containsExactly("qwen-server-r2-m0");
        assertThat(gone.retirements()).isEmpty();
    }

    @Test
    void withASurgeTheReplacementComesFirstAndTheOldOneRetiresOnceItIsReady() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("server").replicas(2).maxSurge(1))
                .desired();
        String hash = hashes(d).get("server");

        ReplicaPlan first = plan(d, replicas(d, "old-hash", 0, 1), List.of("qwen-server"));
        assertThat(names(first.create())).containsExactly("qwen-server-r2-m0");
        assertThat(first.retirements()).isEmpty();

        List<Pod> surged = new ArrayList<>(replicas(d, "old-hash", 0, 1));
        surged.addAll(replicas(d, hash, 2));
        ReplicaPlan second = plan(d, surged, List.of("qwen-server"));
        assertThat(candidates(second)).containsExactly("server/1 ROLLOUT");
        assertThat(second.create()).isEmpty();

        List<Pod> done = new ArrayList<>(replicas(d, hash, 0, 2));
        ReplicaPlan last = plan(d, done, List.of("qwen-server"));
        assertThat(last.create()).as("no surge once nothing is outdated").isEmpty();
        assertThat(last.retirements()).isEmpty();
    }

    private static ReplicaPlan planWithNodesLeaving(
            DesiredDeployment d, List<Pod> pods, Map<String, String> nodesLeaving) {
        return planWithNodesLeaving(d, pods, nodesLeaving, Duration.ZERO, Set.of());
    }

    /**
     * @param sinceSeen how long ago the nodes were first seen going
     * @param moving the ordinals whose move is under way
     */
    private static ReplicaPlan planWithNodesLeaving(
            DesiredDeployment d,
            List<Pod> pods,
            Map<String, String> nodesLeaving,
            Duration sinceSeen,
            Set<Integer> moving) {
        Map<String, NodesLeaving.Going> going = nodesLeaving.entrySet().stream()
                .collect(Collectors.toMap(
                        Map.Entry::getKey, e -> new NodesLeaving.Going(e.getValue(), NOW.minus(sinceSeen))));
        return ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of("qwen-server"),
                new ReplicaPlanner.Retirements(
                        Map.of(),
                        Map.of("server", moving),
                        Map.of(),
                        allIdle(Inventory.of(pods)),
                        true,
                        false,
                        going,
                        NOW));
    }

    /** node-b, drained. */
    private static final Map<String, String> DRAINED = Map.of("node-b", "cordoned");

    /** Replicas 0 and 1 on node-a, 2 and 3 on node-b, at the current configuration. */
    private static List<Pod> twoOnEachNode(DesiredDeployment d) {
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(on("node-a", replicas(d, hash, 0, 1)));
        pods.addAll(on("node-b", replicas(d, hash, 2, 3)));
        return pods;
    }

    /** The replica's Pods as bound to {@code node}. */
    private static List<Pod> on(String node, List<Pod> pods) {
        return pods.stream()
                .map(p -> new PodBuilder(p)
                        .editSpec()
                        .withNodeName(node)
                        .endSpec()
                        .build())
                .toList();
    }

    @Test
    void aReplicaOnACordonedNodeMovesOneAtATimeWithItsReplacementFirstWhenTheRoleMaySurge() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("server").replicas(4).maxSurge(1))
                .desired();
        List<Pod> pods = twoOnEachNode(d);

        ReplicaPlan first = planWithNodesLeaving(d, pods, DRAINED);
        assertThat(names(first.create())).as("the replacement comes first").containsExactly("qwen-server-r4-m0");
        assertThat(first.retirements()).isEmpty();

        pods.addAll(replicas(d, hashes(d).get("server"), 4));
        ReplicaPlan second = planWithNodesLeaving(d, pods, DRAINED);
        assertThat(candidates(second)).containsExactly("server/3 NODE_MAINTENANCE");
        assertThat(second.retirements().get(0).chosenBecause()).contains("node-b is cordoned");
        assertThat(second.later())
                .extracting(NextRetirement.Replica::ordinal)
                .as("the other one waits its turn")
                .containsExactly(2);
        assertThat(second.create()).isEmpty();

        ReplicaPlan uncordoned = planWithNodesLeaving(d, pods, Map.of());
        assertThat(uncordoned.retirements())
                .as("the surplus replacement is what leaves once the node stays")
                .extracting(NextRetirement.Candidate::purpose)
                .containsOnly(NextRetirement.Purpose.REDUCTION);
    }

    @Test
    void withoutASurgeTheReplicaOnTheLeavingNodeRetiresFirstAndComesBackUnderItsOwnOrdinal() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(on("node-a", replicas(d, hash, 0)));
        pods.addAll(on("node-b", replicas(d, hash, 1)));

        ReplicaPlan moving =
                planWithNodesLeaving(d, pods, Map.of("node-b", "marked for removal by the cluster autoscaler"));

        assertThat(candidates(moving)).containsExactly("server/1 NODE_MAINTENANCE");
        assertThat(moving.create()).isEmpty();
        ReplicaPlan gone = planWithNodesLeaving(d, on("node-a", replicas(d, hash, 0)), Map.of("node-b", "cordoned"));
        assertThat(names(gone.create())).containsExactly("qwen-server-r1-m0");
    }

    @Test
    void aRoleThatLeavesMaintenanceToEvictionsAndUnscheduledReplicasAreNotMoved() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("server").replicas(2).disruption(null, "Evict"))
                .desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(on("node-b", replicas(d, hash, 0, 1)));

        assertThat(planWithNodesLeaving(d, pods, Map.of("node-b", "cordoned")).retirements())
                .isEmpty();

        DesiredDeployment protocol =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        assertThat(planWithNodesLeaving(
                                protocol,
                                replicas(protocol, hashes(protocol).get("server"), 0),
                                Map.of("node-b", "cordoned"))
                        .retirements())
                .as("a Pod no node holds yet")
                .isEmpty();
    }

    @Test
    void aReplicaOfSeveralPodsMovesWhenAnyMemberIsOnALeavingNode() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("server").replicas(2).size(2))
                .desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(on("node-a", replicas(d, hash, 0)));
        List<Pod> split = replicas(d, hash, 1);
        pods.add(on("node-a", List.of(split.get(0))).get(0));
        pods.add(on("node-c", List.of(split.get(1))).get(0));

        ReplicaPlan moving = planWithNodesLeaving(d, pods, Map.of("node-c", "being disrupted by Karpenter"));

        assertThat(candidates(moving)).containsExactly("server/1 NODE_MAINTENANCE");
        assertThat(moving.retirements().get(0).chosenBecause()).contains("node-c is being disrupted by Karpenter");
    }

    /** The replica's Pods as the scheduler leaves them when no node has room: unbound, PodScheduled False. */
    private static List<Pod> unplaceable(List<Pod> pods) {
        return pods.stream()
                .map(p -> new PodBuilder(p)
                        .editSpec()
                        .withNodeName(null)
                        .endSpec()
                        .withNewStatus()
                        .withPhase("Pending")
                        .addNewCondition()
                        .withType("PodScheduled")
                        .withStatus("False")
                        .withReason("Unschedulable")
                        .withMessage(
                                "0/2 nodes are available: 1 node(s) were unschedulable, 1 Insufficient nvidia.com/gpu.")
                        .endCondition()
                        .endStatus()
                        .build())
                .toList();
    }

    @Test
    void aReplacementNoNodeHasRoomForHoldsUpARolloutButNotTheNextMoveOffALeavingNode() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(4)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(on("node-a", replicas(d, hash, 0, 1)));
        pods.addAll(on("node-b", replicas(d, hash, 2)));
        List<Pod> starting = new ArrayList<>(pods);
        starting.addAll(on("node-a", ObservedPods.replica(d, "server", 3, hash, false)));
        pods.addAll(unplaceable(replicas(d, hash, 3)));
        Map<String, String> drained = Map.of("node-b", "cordoned");

        assertThat(candidates(planWithNodesLeaving(d, starting, drained)))
                .as("a replacement that is starting")
                .isEmpty();
        assertThat(candidates(planWithNodesLeaving(d, pods, drained)))
                .as("a replacement no node has room for")
                .containsExactly("server/2 NODE_MAINTENANCE");

        List<Pod> rolling = new ArrayList<>(replicas(d, "old-hash", 0, 1, 2));
        rolling.addAll(unplaceable(replicas(d, hash, 3)));
        assertThat(planWithNodesLeaving(d, rolling, Map.of()).retirements())
                .as("a rollout waits for room")
                .isEmpty();
    }

    /** A drain waits on a role no longer than its drain budget from when its node was first seen going. */
    @Test
    void aMoveHasWhatIsLeftOfTheRolesDrainBudgetAndOnceItIsGoneTheReplicasStillOnTheNodeGoToTheDrain() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("server").replicas(4).drainSeconds(120))
                .desired();
        List<Pod> pods = twoOnEachNode(d);

        ReplicaPlan fresh = planWithNodesLeaving(d, pods, DRAINED, Duration.ZERO, Set.of());
        assertThat(fresh.retirements())
                .singleElement()
                .satisfies(c -> assertThat(c.drainBudget()).hasSeconds(120));
        assertThat(fresh.handedBack()).isEmpty();

        ReplicaPlan later = planWithNodesLeaving(d, pods, DRAINED, Duration.ofSeconds(90), Set.of());
        assertThat(later.retirements())
                .as("a move begun 90 s after the node was seen going")
                .singleElement()
                .satisfies(c -> assertThat(c.drainBudget()).hasSeconds(30));

        ReplicaPlan outOfTime = planWithNodesLeaving(d, pods, DRAINED, Duration.ofSeconds(120), Set.of(3));
        assertThat(outOfTime.handedBack())
                .as("the move under way keeps its own deadline; the other goes to the drain")
                .extracting(h -> h.replica().ordinal())
                .containsExactly(2);
        assertThat(outOfTime.handedBack().get(0).message())
                .contains("could not be moved off its node node-b (cordoned) within 120 s");
        assertThat(candidates(outOfTime)).containsExactly("server/3 NODE_MAINTENANCE");
        assertThat(outOfTime.later()).isEmpty();

        ReplicaPlan noneUnderWay = planWithNodesLeaving(d, pods, DRAINED, Duration.ofSeconds(150), Set.of());
        assertThat(noneUnderWay.handedBack())
                .extracting(h -> h.replica().ordinal())
                .containsExactlyInAnyOrder(2, 3);
        assertThat(noneUnderWay.retirements()).isEmpty();
    }

    private static ReplicaPlan planRefreshing(DesiredDeployment d, List<Pod> pods, boolean refresh) {
        return ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(pods),
                List.of("qwen-server"),
                new ReplicaPlanner.Retirements(
                        Map.of(), Map.of(), Map.of(), allIdle(Inventory.of(pods)), true, refresh, Map.of(), NOW));
    }

    @Test
    void onlyTheRefreshReplacesReplicasWithAnOlderHookAndThenOnlyThoseOneAtATime() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();
        String hash = hashes(d).get("server");
        PodRenderer olderRelease = new PodRenderer(new DrainTimelines(), "print('an older hook')");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(olderRelease, d, "server", 0, hash, true));
        pods.addAll(replicas(d, hash, 1));
        pods.addAll(ObservedPods.replica(olderRelease, d, "server", 2, hash, true));

        ReplicaPlan untouched = planRefreshing(d, pods, false);
        assertThat(untouched.retirements()).isEmpty();
        assertThat(untouched.create()).isEmpty();
        assertThat(untouched.later()).isEmpty();

        ReplicaPlan refreshing = planRefreshing(d, pods, true);
        assertThat(candidates(refreshing)).containsExactly("server/2 ROLLOUT");
        assertThat(refreshing.retirements().get(0).chosenBecause()).contains(Annotations.REFRESH_HOOKS);
        assertThat(refreshing.later())
                .as("the replica at the current hook is left alone")
                .containsExactly(new NextRetirement.Replica("server", 0));
        assertThat(refreshing.create()).isEmpty();
    }

    @Test
    void aRefreshWithASurgeCreatesTheReplacementFirst() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("server").replicas(2).maxSurge(1))
                .desired();
        String hash = hashes(d).get("server");
        PodRenderer olderRelease = new PodRenderer(new DrainTimelines(), "print('an older hook')");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(olderRelease, d, "server", 0, hash, true));
        pods.addAll(ObservedPods.replica(olderRelease, d, "server", 1, hash, true));

        assertThat(names(planRefreshing(d, pods, true).create())).containsExactly("qwen-server-r2-m0");
        assertThat(planRefreshing(d, pods, false).create()).isEmpty();
    }

    @Test
    void aRolloutPassesOverAnAbortedReplicaAndMovesOn() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(replicas(d, "old-hash", 0, 1, 2)),
                List.of("qwen-server"),
                new ReplicaPlanner.Retirements(
                        Map.of(), Map.of(), Map.of("server", Set.of(2)), Map.of(), true, false, Map.of(), NOW));

        assertThat(candidates(plan)).containsExactly("server/1 ROLLOUT");
        assertThat(plan.later())
                .containsExactlyInAnyOrder(
                        new NextRetirement.Replica("server", 0), new NextRetirement.Replica("server", 2));
    }

    @Test
    void anOutdatedReplicaThatNeverRanIsReplacedWithoutTheProtocol() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        List<Pod> pending = ObservedPods.replica(d, "server", 0, "old-hash", false).stream()
                .map(p -> new PodBuilder(p)
                        .withNewStatus()
                        .withPhase("Pending")
                        .endStatus()
                        .build())
                .toList();

        ReplicaPlan plan = plan(d, pending, List.of("qwen-server"));

        assertThat(names(plan.neverRan())).containsExactly("qwen-server-r0-m0");
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void eachCandidateCarriesItsRolesDrainBudget() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .role(role("server").replicas(1).drainSeconds(3600))
                .desired();

        ReplicaPlan plan = plan(d, replicas(d, hashes(d).get("server"), 0, 1), List.of("qwen-server"));

        assertThat(plan.retirements())
                .singleElement()
                .satisfies(c -> assertThat(c.drainBudget()).hasHours(1));
    }

    @Test
    void withTheChoiceByLoadOffTheHighestOrdinalsLeaveWithoutAnyRead() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();

        ReplicaPlan plan = ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                Inventory.of(replicas(d, hashes(d).get("server"), 0, 1, 2)),
                List.of("qwen-server"),
                new ReplicaPlanner.Retirements(Map.of(), Map.of(), Map.of(), Map.of(), false, false, Map.of(), NOW));

        assertThat(plan.awaitingReads()).isEmpty();
        assertThat(candidates(plan)).containsExactly("server/2 REDUCTION", "server/1 REDUCTION");
    }
}
