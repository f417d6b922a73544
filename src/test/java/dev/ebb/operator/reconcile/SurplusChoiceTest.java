package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.read.Reading;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class SurplusChoiceTest {
    private final DesiredDeployment d =
            deployment("q", "vLLM").role(role("s").size(2)).desired();

    private List<Pod> replica(int ordinal, boolean ran) {
        List<Pod> pods = new ArrayList<>();
        for (Pod pod : ObservedPods.replica(d, "s", ordinal, "h", ran)) {
            pods.add(
                    ran
                            ? new PodBuilder(pod)
                                    .editStatus()
                                    .withContainerStatuses(new ContainerStatusBuilder()
                                            .withName("main")
                                            .withContainerID("containerd://" + ordinal)
                                            .withRestartCount(0)
                                            .build())
                                    .endStatus()
                                    .build()
                            : new PodBuilder(pod)
                                    .withNewStatus()
                                    .withPhase("Pending")
                                    .endStatus()
                                    .build());
        }
        return pods;
    }

    private NavigableMap<Integer, ObservedReplica> replicas(List<Pod> pods) {
        return Inventory.of(pods).replicas("s");
    }

    @Test
    void nothingLeavesWhileTheRoleHasWhatItShould() {
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.addAll(replica(1, true));

        assertThat(SurplusChoice.split(replicas(pods), 2, Set.of(), "h", Map.of(), true))
                .satisfies(split -> {
                    assertThat(split.leaving()).isEmpty();
                    assertThat(split.awaitingReads()).isEmpty();
                });
        assertThat(SurplusChoice.split(replicas(pods), 3, Set.of(), "h", Map.of(), true)
                        .leaving())
                .isEmpty();
    }

    @Test
    void amongEquallyIdleReplicasTheHighestOrdinalLeavesThroughTheProtocol() {
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.addAll(replica(3, true));
        pods.addAll(replica(1, true));

        assertThat(SurplusChoice.split(replicas(pods), 2, Set.of(), "h", allIdle(replicas(pods)), true)
                        .leaving())
                .singleElement()
                .satisfies(r -> {
                    assertThat(r.replica().ordinal()).isEqualTo(3);
                    assertThat(r.direct()).isFalse();
                });
    }

    @Test
    void replicaThatNeverRanLeavesFirstAndDirectly() {
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.addAll(replica(1, false));
        pods.addAll(replica(2, true));

        SurplusChoice.Split split = SurplusChoice.split(replicas(pods), 2, Set.of(), "h", Map.of(), true);

        assertThat(split.awaitingReads())
                .as("no read is needed once the never-ran replica covers the surplus")
                .isEmpty();
        assertThat(split.leaving()).singleElement().satisfies(r -> {
            assertThat(r.replica().ordinal()).isEqualTo(1);
            assertThat(r.direct()).isTrue();
        });
    }

    @Test
    void restartedContainerCountsAsHavingRun() {
        Pod crashed = new PodBuilder(replica(1, false).get(0))
                .editStatus()
                .withContainerStatuses(new ContainerStatusBuilder()
                        .withName("main")
                        .withRestartCount(3)
                        .build())
                .endStatus()
                .build();
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.add(crashed);
        pods.add(replica(1, false).get(1));

        assertThat(SurplusChoice.split(replicas(pods), 1, Set.of(), "h", allIdle(replicas(pods)), true)
                        .leaving())
                .singleElement()
                .satisfies(r -> assertThat(r.direct()).isFalse());
    }

    /** Every replica read idle: the choice among equals goes to the highest ordinal. */
    static Map<Integer, Reading> allIdle(NavigableMap<Integer, ObservedReplica> replicas) {
        return replicas.keySet().stream().collect(Collectors.toMap(o -> o, o -> new Reading.Idle()));
    }

    /** A role as it may be found: some ordinals, each ran or not, and which of those that ran a retirement holds. */
    record RoleState(Map<Integer, Boolean> ranByOrdinal, int desired, Set<Integer> held, boolean rollingOut) {
        /** Every replica is created at "h": another hash makes them all outdated. */
        String hash() {
            return rollingOut ? "new" : "h";
        }

        NavigableMap<Integer, ObservedReplica> replicas(SurplusChoiceTest test) {
            List<Pod> pods = new ArrayList<>();
            ranByOrdinal.forEach((ordinal, ran) -> pods.addAll(test.replica(ordinal, ran)));
            return test.replicas(pods);
        }
    }

    @Provide
    Arbitrary<RoleState> roles() {
        return Arbitraries.maps(Arbitraries.integers().between(0, 7), Arbitraries.of(true, true, true, false))
                .ofMaxSize(8)
                .flatMap(ran -> Combinators.combine(
                                Arbitraries.integers().between(0, 6),
                                Arbitraries.subsetOf(ran.keySet()),
                                Arbitraries.of(true, false))
                        .as((desired, held, rollingOut) -> new RoleState(
                                ran,
                                desired,
                                held.stream()
                                        .filter(o -> Boolean.TRUE.equals(ran.get(o)))
                                        .collect(Collectors.toSet()),
                                rollingOut)));
    }

    @Property(tries = 500)
    void everyReplicaEitherStaysOrLeavesAndOnlyOnesThatNeverRanGoDirectly(@ForAll("roles") RoleState role) {
        NavigableMap<Integer, ObservedReplica> replicas = role.replicas(this);

        SurplusChoice.Split split =
                SurplusChoice.split(replicas, role.desired(), role.held(), role.hash(), allIdle(replicas), true);

        Set<Integer> leaving =
                split.leaving().stream().map(r -> r.replica().ordinal()).collect(Collectors.toSet());
        assertThat(leaving).hasSize(split.leaving().size());
        assertThat(split.staying().keySet()).noneMatch(leaving::contains);
        assertThat(Stream.concat(leaving.stream(), split.staying().keySet().stream())
                        .collect(Collectors.toSet()))
                .isEqualTo(replicas.keySet());
        assertThat(split.staying().size()).isLessThanOrEqualTo(role.desired());
        assertThat(split.leaving())
                .allSatisfy(r -> assertThat(r.direct()).isEqualTo(!r.replica().everRan()));
        if (role.held().isEmpty()) {
            assertThat(split.staying()).hasSize(Math.min(role.desired(), replicas.size()));
        }
        assertThat(split.awaitingReads()).isEmpty();
    }

    /** Until its candidates are read, a role over its count neither loses nor gains a replica by the reads' absence. */
    @Property(tries = 500)
    void unreadCandidatesStayUntilReadAndOnlyTheyAreAwaited(@ForAll("roles") RoleState role) {
        NavigableMap<Integer, ObservedReplica> replicas = role.replicas(this);

        SurplusChoice.Split split =
                SurplusChoice.split(replicas, role.desired(), role.held(), role.hash(), Map.of(), true);

        assertThat(split.awaitingReads()).allSatisfy(r -> {
            assertThat(split.staying()).containsKey(r.ordinal());
            assertThat(r.everRan()).isTrue();
            assertThat(r.configHash()).contains(role.hash());
        });
        if (!split.awaitingReads().isEmpty()) {
            assertThat(split.staying().size()).isGreaterThan(role.desired());
            assertThat(split.leaving())
                    .noneMatch(r -> !r.direct()
                            && r.replica()
                                    .configHash()
                                    .filter(role.hash()::equals)
                                    .isPresent()
                            && !role.held().contains(r.replica().ordinal()));
        }
    }

    /** What a rollout does to the role: one replica that stays is deleted and gone, before its successor exists. */
    @Property(tries = 500)
    void duringARolloutAHeldReplicaThatLeavesKeepsLeavingWhenAReplicaThatStaysIsGone(@ForAll("roles") RoleState role) {
        NavigableMap<Integer, ObservedReplica> replicas = role.replicas(this);
        SurplusChoice.Split before =
                SurplusChoice.split(replicas, role.desired(), role.held(), "new", allIdle(replicas), true);

        for (int gone : before.staying().keySet()) {
            NavigableMap<Integer, ObservedReplica> without = new TreeMap<>(replicas);
            without.remove(gone);
            SurplusChoice.Split after =
                    SurplusChoice.split(without, role.desired(), role.held(), "new", allIdle(without), true);

            before.leaving().stream()
                    .map(r -> r.replica().ordinal())
                    .filter(role.held()::contains)
                    .forEach(held -> assertThat(after.leaving())
                            .anySatisfy(r -> assertThat(r.replica().ordinal()).isEqualTo(held)));
        }
    }
}
