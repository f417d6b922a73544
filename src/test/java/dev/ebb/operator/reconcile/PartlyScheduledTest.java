package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PartlyScheduledTest {
    private static final String FULL =
            "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available.";

    private static Pod member(int ordinal, int member, String node, String schedulerSays) {
        PodBuilder pod = new PodBuilder()
                .withNewMetadata()
                .withName("big-tp-r" + ordinal + "-m" + member)
                .withUid("u" + ordinal + member)
                .withLabels(Map.of(
                        Labels.ROLE,
                        "tp",
                        Labels.REPLICA,
                        Integer.toString(ordinal),
                        Labels.MEMBER_INDEX,
                        Integer.toString(member)))
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .endSpec();
        if (schedulerSays != null) {
            pod.withNewStatus()
                    .addNewCondition()
                    .withType("PodScheduled")
                    .withStatus("False")
                    .withReason("Unschedulable")
                    .withMessage(schedulerSays)
                    .endCondition()
                    .endStatus();
        }
        return pod.build();
    }

    @Test
    void aReplicaWithPlacedAndUnplaceableMembersIsToldWithWhatTheSchedulerSaid() {
        List<PartlyScheduled.Replica> told = PartlyScheduled.among(List.of(
                member(0, 0, "gpu-a", null),
                member(0, 1, null, FULL),
                member(1, 0, "gpu-b", null),
                member(1, 1, "gpu-c", null)));

        assertThat(told).singleElement().satisfies(r -> {
            assertThat(r.message())
                    .isEqualTo(
                            "replica 0 of role tp is partly scheduled: big-tp-r0-m0 on gpu-a hold their nodes' accelerators"
                                    + " while big-tp-r0-m1 cannot be placed (" + FULL
                                    + "); the replica serves nothing until every member is placed. A gang"
                                    + " scheduler places a replica whole");
            assertThat(r.key()).isEqualTo("u01");
        });
    }

    @Test
    void aReplicaNoneOfWhoseMembersIsPlacedHoldsNothingAndIsNotTold() {
        assertThat(PartlyScheduled.among(List.of(member(0, 0, null, FULL), member(0, 1, null, FULL))))
                .isEmpty();
    }

    @Test
    void aMemberMerelyNotYetLookedAtBySchedulerIsNotTold() {
        assertThat(PartlyScheduled.among(List.of(member(0, 0, "gpu-a", null), member(0, 1, null, null))))
                .isEmpty();
    }

    @Test
    void whatTheSchedulerSaysIsShownOnOneBoundedLine() {
        String hostile = "line one\nline two\u0007" + "x".repeat(10_000);

        String message = PartlyScheduled.among(List.of(member(0, 0, "gpu-a", null), member(0, 1, null, hostile)))
                .get(0)
                .message();

        assertThat(message).doesNotContain("\n").doesNotContain("\u0007").contains("line one line two");
        assertThat(message.length()).isLessThan(600);
    }

    @Test
    void podsWithoutTheOperatorsLabelsAreLeftOut() {
        Pod stranger = new PodBuilder(member(0, 1, null, FULL))
                .editMetadata()
                .withLabels(Map.of(Labels.REPLICA, "zero"))
                .endMetadata()
                .build();

        assertThat(PartlyScheduled.among(List.of(member(0, 0, "gpu-a", null), stranger)))
                .isEmpty();
    }

    private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");
    private static final Map<String, Duration> BOUND = Map.of("tp", Duration.ofSeconds(900));

    /** A member as the API server and the scheduler leave it: placed since {@code placedAt}, or told unschedulable since {@code waitingAt}. */
    private static Pod timed(int member, String placedAt, String waitingAt, boolean ready) {
        PodBuilder pod = new PodBuilder(member(0, member, placedAt == null ? null : "gpu-a", null));
        if (placedAt != null) {
            pod.withNewStatus()
                    .addNewCondition()
                    .withType("PodScheduled")
                    .withStatus("True")
                    .withLastTransitionTime(placedAt)
                    .endCondition()
                    .addNewCondition()
                    .withType("Ready")
                    .withStatus(ready ? "True" : "False")
                    .endCondition()
                    .endStatus();
        } else {
            pod.withNewStatus()
                    .addNewCondition()
                    .withType("PodScheduled")
                    .withStatus("False")
                    .withReason("Unschedulable")
                    .withMessage(FULL)
                    .withLastTransitionTime(waitingAt)
                    .endCondition()
                    .endStatus();
        }
        return pod.build();
    }

    record Case(
            String name,
            String placedAt,
            String waitingAt,
            boolean leaderReady,
            Duration after,
            Map<String, Duration> bound,
            Map<String, Instant> released,
            boolean releasedNow,
            Optional<Duration> lookAgainIn) {
        Case(
                String name,
                String placedAt,
                String waitingAt,
                boolean leaderReady,
                Duration after,
                Map<String, Duration> bound,
                boolean releasedNow,
                Optional<Duration> lookAgainIn) {
            this(name, placedAt, waitingAt, leaderReady, after, bound, Map.of(), releasedNow, lookAgainIn);
        }
    }

    static Stream<Case> releases() {
        String t0 = T0.toString();
        String later = T0.plusSeconds(300).toString();
        return Stream.of(
                new Case(
                        "within its bound",
                        t0,
                        t0,
                        false,
                        Duration.ofSeconds(899),
                        BOUND,
                        false,
                        Optional.of(Duration.ofSeconds(1))),
                new Case("at its bound", t0, t0, false, Duration.ofSeconds(900), BOUND, true, Optional.empty()),
                new Case(
                        "counted from the later of placed and told unschedulable",
                        t0,
                        later,
                        false,
                        Duration.ofSeconds(1000),
                        BOUND,
                        false,
                        Optional.of(Duration.ofSeconds(200))),
                new Case(
                        "a ready member may carry requests",
                        t0,
                        t0,
                        true,
                        Duration.ofHours(5),
                        BOUND,
                        false,
                        Optional.empty()),
                new Case(
                        "placed at a time nobody wrote",
                        null,
                        t0,
                        false,
                        Duration.ofHours(5),
                        BOUND,
                        false,
                        Optional.empty()),
                new Case(
                        "placed at an unreadable time",
                        "yesterday",
                        t0,
                        false,
                        Duration.ofHours(5),
                        BOUND,
                        false,
                        Optional.empty()),
                new Case(
                        "told unschedulable at an oversized time",
                        t0,
                        "2026-12-03T10:00:00Z" + "0".repeat(10_000),
                        false,
                        Duration.ofHours(5),
                        BOUND,
                        false,
                        Optional.empty()),
                // a pass whose cache has not yet seen the deletions of the pass before
                new Case(
                        "released already, its deletions not yet seen",
                        t0,
                        t0,
                        false,
                        Duration.ofSeconds(901),
                        BOUND,
                        Map.of(HeldBack.replicaKey("tp", 0), T0.plusSeconds(1800)),
                        false,
                        Optional.empty()),
                new Case(
                        "released before, its hold over",
                        t0,
                        t0,
                        false,
                        Duration.ofSeconds(1900),
                        BOUND,
                        Map.of(HeldBack.replicaKey("tp", 0), T0.plusSeconds(1800)),
                        true,
                        Optional.empty()),
                new Case(
                        "a role the spec no longer has",
                        t0,
                        t0,
                        false,
                        Duration.ofHours(5),
                        Map.of("other", Duration.ofSeconds(60)),
                        false,
                        Optional.empty()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void aPartlyPlacedReplicaIsReleasedOnlyOnceItHasHeldItsNodesForItsRolesBound(Case c) {
        Pod leader = c.placedAt() == null
                ? new PodBuilder(member(0, 0, "gpu-a", null))
                        .withNewStatus()
                        .addNewCondition()
                        .withType("PodScheduled")
                        .withStatus("True")
                        .endCondition()
                        .endStatus()
                        .build()
                : timed(0, c.placedAt(), null, c.leaderReady());
        List<PartlyScheduled.Replica> replicas =
                PartlyScheduled.among(List.of(leader, timed(1, null, c.waitingAt(), false)));

        PartlyScheduled.Verdict verdict = PartlyScheduled.due(replicas, c.bound(), c.released(), T0.plus(c.after()));

        assertThat(replicas).as("told in every case").hasSize(1);
        assertThat(verdict.release()).as("released").hasSize(c.releasedNow() ? 1 : 0);
        assertThat(verdict.lookAgainIn()).isEqualTo(c.lookAgainIn());
    }

    @Test
    void aReleaseNamesWhatWasHeldForHowLongAndHowLongTheReplicaIsHeldBack() {
        List<PartlyScheduled.Replica> replicas = PartlyScheduled.among(
                List.of(timed(0, T0.toString(), null, false), timed(1, null, T0.toString(), false)));

        PartlyScheduled.Release release = PartlyScheduled.due(replicas, BOUND, Map.of(), T0.plusSeconds(905))
                .release()
                .get(0);

        assertThat(release.message())
                .isEqualTo(
                        "replica 0 of role tp held big-tp-r0-m0 on gpu-a for 905 s while big-tp-r0-m1 could not be"
                                + " placed; its Pods are deleted, giving those accelerators back, and created again held back from the scheduler for 900 s");
        assertThat(release.replica().members())
                .extracting(p -> p.getMetadata().getName())
                .containsExactly("big-tp-r0-m0", "big-tp-r0-m1");
    }
}
