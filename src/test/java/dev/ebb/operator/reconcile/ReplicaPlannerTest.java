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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ReplicaPlannerTest {
    private static final PodRenderer RENDERER = new PodRenderer();

    private static Map<String, String> hashes(DesiredDeployment d) {
        return d.roles().stream().collect(Collectors.toMap(DesiredRole::name, r -> RENDERER.configHash(d, r)));
    }

    private static ReplicaPlan plan(DesiredDeployment d, List<Pod> pods, List<String> services) {
        return ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), services, known(Map.of(), allIdle(Inventory.of(pods))));
    }

    private static ReplicaPlanner.Retirements known(Map<String, Set<Integer>> held, Map<String, Map<Integer, Reading>> readings) {
        return new ReplicaPlanner.Retirements(held, Map.of(), Map.of(), readings, true, false);
    }

    private static List<String> candidates(ReplicaPlan plan) {
        return plan.retirements().stream().map(c -> c.role() + "/" + c.ordinal() + " " + c.purpose()).toList();
    }

    /** Every replica read idle: the choice among equals goes to the highest ordinal. */
    private static Map<String, Map<Integer, Reading>> allIdle(Inventory inventory) {
        Map<String, Map<Integer, Reading>> readings = new HashMap<>();
        inventory.byRole().forEach((role, replicas) -> replicas.keySet()
                .forEach(ordinal -> readings.computeIfAbsent(role, r -> new HashMap<>()).put(ordinal, new Reading.Idle())));
        return readings;
    }

    private static List<String> names(List<Pod> pods) {
        return pods.stream().map(p -> p.getMetadata().getName()).toList();
    }

    @Test
    void emptyWorldGetsEveryReplicaAndTheRoleService() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();

        ReplicaPlan plan = plan(d, List.of(), List.of());

        assertThat(names(plan.create())).containsExactly("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
        assertThat(plan.services()).extracting(s -> s.getMetadata().getName()).containsExactly("qwen-server");
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void newReplicasTakeTheLowestFreeOrdinals() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(4)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        pods.addAll(ObservedPods.replica(d, "server", 1, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 3, hash, true));

        assertThat(names(plan(d, pods, List.of("qwen-server")).create())).containsExactly("qwen-server-r0-m0", "qwen-server-r2-m0");
    }

    @Test
    void everyReplicaTakenAwayIsACandidateHighestOrdinalFirstAndNothingIsDeletedDirectly() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, hash, true));
        }

        ReplicaPlan plan = plan(d, pods, List.of("qwen-server"));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.neverRan()).isEmpty();
        assertThat(plan.retirements()).extracting(c -> c.role() + "/" + c.ordinal()).containsExactly("server/2", "server/1");
    }

    @Test
    void surplusAtTheCurrentConfigurationWaitsForOneReadOfEachThenTheIdlestLeaveAndAnUnreadableOneStays() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, hash, true));
        }

        ReplicaPlan unread = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of(), Map.of()));

        assertThat(unread.awaitingReads()).extracting(ObservedReplica::ordinal).containsExactly(0, 1, 2);
        assertThat(unread.retirements()).isEmpty();
        assertThat(unread.create()).isEmpty();

        ReplicaPlan read = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of(),
                Map.of("server", Map.of(0, new Reading.Busy(1), 1, new Reading.Busy(5), 2, new Reading.Failed("exec refused")))));

        assertThat(read.awaitingReads()).isEmpty();
        assertThat(read.retirements()).extracting(c -> c.role() + "/" + c.ordinal()).containsExactly("server/0", "server/1");
        assertThat(read.retirements().get(0).chosenBecause()).isEqualTo("in flight 1, lowest of 3 read: r0 1, r1 5, r2 unreadable");
    }

    @Test
    void anOutdatedReplicaLeavesWithoutWaitingForAnyRead() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "server", 0, "old-hash", true));
        pods.addAll(ObservedPods.replica(d, "server", 1, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 2, hash, true));

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of(), Map.of()));

        assertThat(plan.awaitingReads()).isEmpty();
        assertThat(plan.retirements()).extracting(c -> c.role() + "/" + c.ordinal()).containsExactly("server/0");
    }

    @Test
    void surplusReplicasThatNeverRanGoDirectlyAndTheNextThatRanRetires() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        pods.addAll(ObservedPods.replica(d, "server", 0, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 1, hash, true));
        for (int ordinal = 2; ordinal < 4; ordinal++) {
            ObservedPods.replica(d, "server", ordinal, hash, true).forEach(p -> pods.add(new PodBuilder(p).withNewStatus().withPhase("Pending").endStatus().build()));
        }

        ReplicaPlan plan = plan(d, pods, List.of("qwen-server"));

        assertThat(names(plan.neverRan())).containsExactly("qwen-server-r3-m0", "qwen-server-r2-m0");
        assertThat(plan.retirements()).extracting(c -> c.role() + "/" + c.ordinal()).containsExactly("server/1");
        assertThat(plan.create()).isEmpty();
    }

    @Test
    void multiPodReplicaGetsEveryMemberAndAHeadlessService() {
        DesiredDeployment d = deployment("qwen", "SGLang").role(role("big").size(3).replicas(2)).desired();

        ReplicaPlan plan = plan(d, List.of(), List.of());

        assertThat(names(plan.create())).containsExactly(
                "qwen-big-r0-m0", "qwen-big-r0-m1", "qwen-big-r0-m2", "qwen-big-r1-m0", "qwen-big-r1-m1", "qwen-big-r1-m2");
        assertThat(plan.services()).extracting(s -> s.getMetadata().getName()).containsExactly("qwen-big", "qwen-big-r0", "qwen-big-r1");
    }

    @Test
    void vanishedMemberOfACurrentReplicaIsPutBack() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("big").size(2)).desired();
        List<Pod> pods = ObservedPods.replica(d, "big", 0, hashes(d).get("big"), true).subList(0, 1);

        assertThat(names(plan(d, pods, List.of()).create())).containsExactly("qwen-big-r0-m1");
    }

    @Test
    void aSurplusReplicaMissingAMemberIsNotRefilled() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("big").size(2).replicas(1)).desired();
        String hash = hashes(d).get("big");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "big", 0, hash, true));
        pods.add(ObservedPods.replica(d, "big", 1, hash, true).get(0));

        ReplicaPlan plan = plan(d, pods, List.of());

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements()).extracting(c -> c.role() + "/" + c.ordinal()).containsExactly("big/1");
    }

    @Test
    void aReplicaWithATerminatingMemberIsNotRefilled() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("big").size(2).replicas(2)).desired();
        String hash = hashes(d).get("big");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "big", 0, hash, true));
        pods.add(new PodBuilder(ObservedPods.replica(d, "big", 1, hash, true).get(0))
                .editMetadata().withDeletionTimestamp("2026-01-01T00:00:00Z").endMetadata().build());

        assertThat(plan(d, pods, List.of()).create()).isEmpty();
    }

    @Test
    void aReplicaARetirementHoldsIsNotRefilledEvenWhenTheRoleWantsItAgain() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("big").size(2).replicas(2)).desired();
        String hash = hashes(d).get("big");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "big", 0, hash, true));
        pods.add(ObservedPods.replica(d, "big", 1, hash, true).get(0));

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of(), known(Map.of("big", Set.of(1)), allIdle(Inventory.of(pods))));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void aRolloutGoesOverTheReplicasThatStayAndLeavesAHeldOneToItsRetirement() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, "old-hash", true));
        }

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(candidates(plan)).containsExactly("server/2 REDUCTION", "server/1 ROLLOUT");
        assertThat(plan.later()).containsExactly(new NextRetirement.Replica("server", 0));
        assertThat(plan.create()).isEmpty();
    }

    @Test
    void onceTheReplacedReplicaIsGoneItsSuccessorIsCreatedAndTheHeldOneStillLeaves() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "server", 0, "old-hash", true));
        pods.addAll(ObservedPods.replica(d, "server", 2, "old-hash", true));

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(names(plan.create())).containsExactly("qwen-server-r1-m0");
        assertThat(candidates(plan)).containsExactly("server/2 REDUCTION");
    }

    @Test
    void aScaleUpKeepsAHeldReplica() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            pods.addAll(ObservedPods.replica(d, "server", ordinal, hash, true));
        }

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void aReplicaLostBesideAHeldOneAtTheCurrentConfigurationCallsTheRetirementOffInsteadOfStartingANewOne() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(2)).desired();
        String hash = hashes(d).get("server");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "server", 1, hash, true));
        pods.addAll(ObservedPods.replica(d, "server", 2, hash, true));

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"), known(Map.of("server", Set.of(2)), allIdle(Inventory.of(pods))));

        assertThat(plan.create()).isEmpty();
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void outdatedReplicaIsLeftForItsRolloutAndNotRefilled() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("big").size(2)).desired();
        List<Pod> pods = ObservedPods.replica(d, "big", 0, "old-hash", true).subList(0, 1);

        assertThat(plan(d, pods, List.of()).create()).isEmpty();
    }

    @Test
    void servicesOfADroppedRoleStayUntilItsLastPodIsGone() {
        DesiredDeployment before = deployment("qwen", "vLLM").role(role("a")).role(role("b").size(2)).desired();
        DesiredDeployment after = deployment("qwen", "vLLM").role(role("a")).desired();
        List<Pod> bPods = ObservedPods.replica(before, "b", 0, "x", true);
        List<String> existing = List.of("qwen-a", "qwen-b", "qwen-b-r0", "qwen-b-r5");

        assertThat(plan(after, bPods, existing).obsoleteServices()).containsExactly("qwen-b-r5");
        assertThat(plan(after, List.of(), existing).obsoleteServices()).containsExactly("qwen-b", "qwen-b-r0", "qwen-b-r5");
    }

    @Test
    void podWithUnreadableLabelsIsAStrayAndNotAReplica() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        List<Pod> pods = new ArrayList<>();
        for (String bad : List.of("abc", "-1", "1e3", " 1", "99999999999999999999", "")) {
            Pod pod = ObservedPods.replica(d, "server", 0, hashes(d).get("server"), true).get(0);
            pods.add(new PodBuilder(pod).editMetadata().withName("bad-" + pods.size()).addToLabels(Labels.REPLICA, bad).endMetadata().build());
        }

        Inventory inventory = Inventory.of(pods);

        assertThat(inventory.strays()).hasSize(6);
        assertThat(inventory.byRole()).isEmpty();
        assertThat(names(ReplicaPlanner.plan(RENDERER, d, hashes(d), inventory, List.of(), known(Map.of(), Map.of())).create())).containsExactly("qwen-server-r0-m0");
    }

    @Test
    void roleServicesAreRenderedForEveryRoleEvenAtZeroReplicas() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("a").replicas(0)).role(role("b")).desired();

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
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();

        ReplicaPlan first = plan(d, replicas(d, "old-hash", 0, 1, 2), List.of("qwen-server"));
        assertThat(candidates(first)).containsExactly("server/2 ROLLOUT");
        assertThat(first.create()).isEmpty();
        assertThat(first.retirements().get(0).chosenBecause()).contains("old-hash").contains(hashes(d).get("server"));

        ReplicaPlan retiring = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(replicas(d, "old-hash", 0, 1, 2)), List.of("qwen-server"),
                new ReplicaPlanner.Retirements(Map.of(), Map.of("server", Set.of(2)), Map.of(), Map.of(), true, false));
        assertThat(candidates(retiring)).as("the one under way, nothing else").containsExactly("server/2 ROLLOUT");
        assertThat(retiring.create()).isEmpty();

        ReplicaPlan gone = plan(d, replicas(d, "old-hash", 0, 1), List.of("qwen-server"));
        assertThat(names(gone.create())).containsExactly("qwen-server-r2-m0");
        assertThat(gone.retirements()).isEmpty();
    }

    @Test
    void withASurgeTheReplacementComesFirstAndTheOldOneRetiresOnceItIsReady() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(2).maxSurge(1)).desired();
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

    private static ReplicaPlan planRefreshing(DesiredDeployment d, List<Pod> pods, boolean refresh) {
        return ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(pods), List.of("qwen-server"),
                new ReplicaPlanner.Retirements(Map.of(), Map.of(), Map.of(), allIdle(Inventory.of(pods)), true, refresh));
    }

    @Test
    void onlyTheRefreshReplacesReplicasWithAnOlderHookAndThenOnlyThoseOneAtATime() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();
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
        assertThat(refreshing.later()).as("the replica at the current hook is left alone").containsExactly(new NextRetirement.Replica("server", 0));
        assertThat(refreshing.create()).isEmpty();
    }

    @Test
    void aRefreshWithASurgeCreatesTheReplacementFirst() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(2).maxSurge(1)).desired();
        String hash = hashes(d).get("server");
        PodRenderer olderRelease = new PodRenderer(new DrainTimelines(), "print('an older hook')");
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(olderRelease, d, "server", 0, hash, true));
        pods.addAll(ObservedPods.replica(olderRelease, d, "server", 1, hash, true));

        assertThat(names(planRefreshing(d, pods, true).create())).containsExactly("qwen-server-r2-m0");
        assertThat(planRefreshing(d, pods, false).create()).isEmpty();
    }

    @Test
    void aRolloutPassesOverAnAbortedReplicaAndMovesOn() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(replicas(d, "old-hash", 0, 1, 2)), List.of("qwen-server"),
                new ReplicaPlanner.Retirements(Map.of(), Map.of(), Map.of("server", Set.of(2)), Map.of(), true, false));

        assertThat(candidates(plan)).containsExactly("server/1 ROLLOUT");
        assertThat(plan.later()).containsExactlyInAnyOrder(new NextRetirement.Replica("server", 0), new NextRetirement.Replica("server", 2));
    }

    @Test
    void anOutdatedReplicaThatNeverRanIsReplacedWithoutTheProtocol() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        List<Pod> pending = ObservedPods.replica(d, "server", 0, "old-hash", false).stream()
                .map(p -> new PodBuilder(p).withNewStatus().withPhase("Pending").endStatus().build()).toList();

        ReplicaPlan plan = plan(d, pending, List.of("qwen-server"));

        assertThat(names(plan.neverRan())).containsExactly("qwen-server-r0-m0");
        assertThat(plan.retirements()).isEmpty();
    }

    @Test
    void eachCandidateCarriesItsRolesDrainBudget() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(1).drainSeconds(3600)).desired();

        ReplicaPlan plan = plan(d, replicas(d, hashes(d).get("server"), 0, 1), List.of("qwen-server"));

        assertThat(plan.retirements()).singleElement().satisfies(c -> assertThat(c.drainBudget()).hasHours(1));
    }

    @Test
    void withTheChoiceByLoadOffTheHighestOrdinalsLeaveWithoutAnyRead() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();

        ReplicaPlan plan = ReplicaPlanner.plan(RENDERER, d, hashes(d), Inventory.of(replicas(d, hashes(d).get("server"), 0, 1, 2)), List.of("qwen-server"),
                new ReplicaPlanner.Retirements(Map.of(), Map.of(), Map.of(), Map.of(), false, false));

        assertThat(plan.awaitingReads()).isEmpty();
        assertThat(candidates(plan)).containsExactly("server/2 REDUCTION", "server/1 REDUCTION");
    }
}
