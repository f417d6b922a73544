package dev.ebb.operator.retire;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which operations a deployment works on: every replica to take away at once, each aborted replica held back on its own
 * until asked, cooled down (longer with each abort in a row) or, once blocked, until the spec changes.
 */
class NextRetirementTest {
    private static final RetirementMachine MACHINE = new RetirementMachine();
    private static final Instant T0 = RetirementMachineTest.T0;
    private static final Duration COOL_DOWN = Duration.ofMinutes(5);
    private static final long GENERATION = 4;
    private static final NextRetirement.Candidate SERVER_2 = candidate("server", 2, NextRetirement.Purpose.REDUCTION);
    private static final NextRetirement.Candidate SERVER_1 = candidate("server", 1, NextRetirement.Purpose.REDUCTION);
    private static final NextRetirement.Candidate SERVER_0 = candidate("server", 0, NextRetirement.Purpose.REDUCTION);
    private static final NextRetirement.Candidate DROPPED_0 = candidate("old", 0, NextRetirement.Purpose.ROLE_DROPPED);
    private static final NextRetirement.Candidate ROLLING_2 = candidate("server", 2, NextRetirement.Purpose.ROLLOUT);
    private static final NextRetirement.RetryPolicy NO_RETRY = policy(null, 0);

    private static NextRetirement.Candidate candidate(String role, int ordinal, NextRetirement.Purpose purpose) {
        return new NextRetirement.Candidate(role, ordinal, purpose, "", Budgets.DRAINING, false);
    }

    private static NextRetirement.RetryPolicy policy(String requested, int maxConcurrent) {
        return new NextRetirement.RetryPolicy(Optional.ofNullable(requested), COOL_DOWN, GENERATION, maxConcurrent);
    }

    private static RetirementRecord record(Retirement r) {
        return new RetirementRecord(r, "", Optional.empty(), 1);
    }

    /** The retirement of server r2 (as {@link RetirementMachineTest#draining()} builds it), moved to another ordinal. */
    private static Retirement inProgress(int ordinal) {
        Retirement r = RetirementMachineTest.draining();
        return new Retirement(
                r.role(),
                ordinal,
                r.cause(),
                r.targets(),
                r.answering(),
                r.standingHold(),
                r.state(),
                r.reason(),
                r.message(),
                r.startedAt(),
                r.phaseStartedAt(),
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());
    }

    private static Retirement inProgress() {
        return inProgress(2);
    }

    private static Retirement abortedAt(Instant at, Reason reason) {
        Retirement r = inProgress();
        return new Retirement(
                r.role(),
                r.ordinal(),
                r.cause(),
                r.targets(),
                r.answering(),
                r.standingHold(),
                RetirementState.Aborted,
                reason,
                "held",
                r.startedAt(),
                at,
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());
    }

    private static Retirement completed() {
        Retirement r = inProgress();
        return new Retirement(
                r.role(),
                r.ordinal(),
                r.cause(),
                r.targets(),
                r.answering(),
                r.standingHold(),
                RetirementState.Completed,
                Reason.COMPLETED,
                "done",
                r.startedAt(),
                T0.plusSeconds(10),
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());
    }

    private static NextRetirement.Abort abort(
            NextRetirement.Candidate replica, Reason reason, Instant at, String token, int attempts) {
        return new NextRetirement.Abort(
                replica.role(),
                replica.ordinal(),
                NextRetirement.SCALE_DOWN,
                reason,
                "held",
                at,
                Optional.ofNullable(token),
                attempts,
                GENERATION);
    }

    private static NextRetirement.Abort abort(
            NextRetirement.Candidate replica, Reason reason, Instant at, String token) {
        return abort(replica, reason, at, token, 1);
    }

    private static List<String> begun(NextRetirement.Plan plan) {
        return plan.begin().stream()
                .map(b -> "r" + b.candidate().ordinal() + " " + b.cause() + " #" + b.attempt())
                .toList();
    }

    @Test
    void aReductionByThreeBeginsThreeRetirementsAtOnce() {
        NextRetirement.Plan plan = NextRetirement.decide(
                List.of(), List.of(), List.of(SERVER_2, SERVER_1, SERVER_0), List.of(), NO_RETRY, T0);

        assertThat(begun(plan)).containsExactly("r2 ScaleDown #1", "r1 ScaleDown #1", "r0 ScaleDown #1");
    }

    @Test
    void retirementsUnderWayAdvanceEachOnItsOwnAndTheRestBeginBesideThem() {
        NextRetirement.Plan plan = NextRetirement.decide(
                List.of(record(inProgress(2))), List.of(), List.of(SERVER_2, SERVER_1), List.of(), NO_RETRY, T0);

        assertThat(plan.advance())
                .extracting(a -> a.current().retirement().ordinal())
                .containsExactly(2);
        assertThat(begun(plan)).containsExactly("r1 ScaleDown #1");
        assertThat(plan.cancel()).isEmpty();
    }

    @Test
    void onlyTheOnesNoLongerWantedAreGivenBack() {
        NextRetirement.Plan plan = NextRetirement.decide(
                List.of(record(inProgress(2)), record(inProgress(1))),
                List.of(),
                List.of(SERVER_1),
                List.of(),
                NO_RETRY,
                T0);

        assertThat(plan.advance())
                .extracting(a -> a.current().retirement().ordinal())
                .containsExactly(1);
        assertThat(plan.cancel())
                .extracting(c -> c.current().retirement().ordinal())
                .containsExactly(2);
        assertThat(plan.begin()).isEmpty();
    }

    @Test
    void aLimitOnConcurrentRetirementsCountsThoseUnderWay() {
        NextRetirement.Plan plan = NextRetirement.decide(
                List.of(record(inProgress(2))),
                List.of(),
                List.of(SERVER_2, SERVER_1, SERVER_0),
                List.of(),
                policy(null, 2),
                T0);

        assertThat(begun(plan)).containsExactly("r1 ScaleDown #1");
        assertThat(NextRetirement.decide(
                                List.of(record(inProgress(2))),
                                List.of(),
                                List.of(SERVER_2, SERVER_1),
                                List.of(),
                                policy(null, 1),
                                T0)
                        .begin())
                .as("one at a time")
                .isEmpty();
    }

    @Test
    void eachCauseIsNamed() {
        NextRetirement.Plan plan =
                NextRetirement.decide(List.of(), List.of(), List.of(DROPPED_0, ROLLING_2), List.of(), NO_RETRY, T0);

        assertThat(begun(plan)).containsExactly("r0 RoleDropped #1", "r2 Rollout #1");
    }

    static Stream<Arguments> heldBack() {
        Instant t = T0.plusSeconds(100);
        return Stream.of(
                Arguments.of(
                        "a refused replica never blocks the next candidate",
                        List.of(abort(SERVER_2, Reason.DISAGGREGATED, t, null)),
                        NO_RETRY,
                        t.plusSeconds(1),
                        List.of("r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "nor one cooling down; the wait is for its cool-down",
                        List.of(abort(SERVER_2, Reason.BUSY, t, null)),
                        NO_RETRY,
                        t.plusSeconds(299),
                        List.of("r1 ScaleDown #1"),
                        t.plus(COOL_DOWN)),
                Arguments.of(
                        "cool-down reached exactly: retried as surplus, the second attempt",
                        List.of(abort(SERVER_2, Reason.BUSY, t, null)),
                        NO_RETRY,
                        t.plus(COOL_DOWN),
                        List.of("r2 Surplus #2", "r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "a second abort in a row waits twice as long",
                        List.of(abort(SERVER_2, Reason.BUSY, t, null, 2)),
                        NO_RETRY,
                        t.plus(COOL_DOWN).plusSeconds(1),
                        List.of("r1 ScaleDown #1"),
                        t.plus(COOL_DOWN.multipliedBy(2))),
                Arguments.of(
                        "and is retried then, as the third attempt",
                        List.of(abort(SERVER_2, Reason.BUSY, t, null, 2)),
                        NO_RETRY,
                        t.plus(COOL_DOWN.multipliedBy(2)),
                        List.of("r2 Surplus #3", "r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "three aborts in a row: still retried by itself, after 20 minutes",
                        List.of(abort(SERVER_2, Reason.BUSY, t, null, 3)),
                        NO_RETRY,
                        t.plus(Duration.ofMinutes(20)),
                        List.of("r2 Surplus #4", "r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "a blocked replica is retried on the user's word, counting afresh",
                        List.of(abort(SERVER_2, Reason.BUSY, t, "t1", 3)),
                        policy("t2", 0),
                        t.plusSeconds(1),
                        List.of("r2 Surplus #1", "r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "refused: the cool-down never retries it",
                        List.of(abort(SERVER_2, Reason.NO_GAUGE_LIST, t, null)),
                        NO_RETRY,
                        t.plus(Duration.ofDays(1)),
                        List.of("r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "refused, the user asks with a new token: retried",
                        List.of(abort(SERVER_2, Reason.NO_GAUGE_LIST, t, "t1")),
                        policy("t2", 0),
                        t,
                        List.of("r2 Surplus #1", "r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "the token an abort already answered retries nothing",
                        List.of(abort(SERVER_2, Reason.BUSY, t, "t1")),
                        policy("t1", 0),
                        t.plusSeconds(1),
                        List.of("r1 ScaleDown #1"),
                        t.plus(COOL_DOWN)),
                Arguments.of(
                        "a first token counts as a request",
                        List.of(abort(SERVER_2, Reason.BUSY, t, null)),
                        policy("t1", 0),
                        t.plusSeconds(1),
                        List.of("r2 Surplus #1", "r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "a member deleted by someone else: retried at once, counting afresh, since what is left is another replica",
                        List.of(abort(SERVER_2, Reason.TERMINATED_OUTSIDE, t, null, 2)),
                        NO_RETRY,
                        t.plusSeconds(1),
                        List.of("r2 Surplus #1", "r1 ScaleDown #1"),
                        null),
                Arguments.of(
                        "every candidate held back: the wait is for the soonest cool-down",
                        List.of(
                                abort(SERVER_2, Reason.BUSY, t, null),
                                abort(SERVER_1, Reason.READ_FAILED, t.minusSeconds(50), null)),
                        NO_RETRY,
                        t.plusSeconds(1),
                        List.of(),
                        t.minusSeconds(50).plus(COOL_DOWN)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("heldBack")
    void eachReplicaIsHeldBackByItsOwnAbort(
            String row,
            List<NextRetirement.Abort> earlier,
            NextRetirement.RetryPolicy retry,
            Instant now,
            List<String> expected,
            Instant soonest) {
        NextRetirement.Plan plan =
                NextRetirement.decide(List.of(), earlier, List.of(SERVER_2, SERVER_1), List.of(), retry, now);

        assertThat(begun(plan)).containsExactlyElementsOf(expected);
        assertThat(plan.soonestRetry()).isEqualTo(Optional.ofNullable(soonest));
    }

    @Test
    void noRetirementBeginsOnAReplicaWhileSomeoneElseDeletesAMemberOfItButItsAbortIsKept() {
        NextRetirement.Candidate terminating =
                new NextRetirement.Candidate("server", 2, NextRetirement.Purpose.REDUCTION, "", Budgets.DRAINING, true);
        RetirementRecord aborted = record(abortedAt(T0, Reason.TERMINATED_OUTSIDE));

        NextRetirement.Plan plan = NextRetirement.decide(
                List.of(aborted), List.of(), List.of(terminating, SERVER_1), List.of(), NO_RETRY, T0.plusSeconds(1));

        assertThat(begun(plan)).containsExactly("r1 ScaleDown #1");
        assertThat(plan.keptAborted()).containsExactly(aborted);
        assertThat(NextRetirement.held(List.of(aborted), List.of())).isEqualTo(Map.of("server", Set.of(2)));
    }

    @Test
    void aRetirementUnderWayStillAdvancesWhileAMemberOfItIsDeletedBySomeoneElse() {
        NextRetirement.Candidate terminating =
                new NextRetirement.Candidate("server", 2, NextRetirement.Purpose.REDUCTION, "", Budgets.DRAINING, true);

        NextRetirement.Plan plan = NextRetirement.decide(
                List.of(record(inProgress())), List.of(), List.of(terminating), List.of(), NO_RETRY, T0.plusSeconds(1));

        assertThat(plan.advance()).hasSize(1);
        assertThat(plan.cancel()).isEmpty();
    }

    @Test
    void aReplicaChangedByAnOutsideDeletionIsNeverBlockedAndARolloutDoesNotPassItOver() {
        NextRetirement.Abort outside = new NextRetirement.Abort(
                "server",
                2,
                NextRetirement.ROLLOUT,
                Reason.TERMINATED_OUTSIDE,
                "",
                T0,
                Optional.empty(),
                5,
                GENERATION);

        assertThat(outside.blocked()).isFalse();
        assertThat(NextRetirement.rolloutWaiting(List.of(outside), NO_RETRY, T0.plusSeconds(1)))
                .isEmpty();
    }

    @Test
    void theCoolDownDoublesWithEachAbortInARowUpToAnHour() {
        Instant t = T0;
        assertThat(List.of(1, 2, 3, 4, 5, 6, 40).stream()
                        .map(n -> Duration.between(
                                        t,
                                        new NextRetirement.Abort(
                                                        "s",
                                                        0,
                                                        NextRetirement.SCALE_DOWN,
                                                        Reason.BUSY,
                                                        "",
                                                        t,
                                                        Optional.empty(),
                                                        n,
                                                        1)
                                                .retryAt(COOL_DOWN)
                                                .orElseThrow())
                                .toMinutes())
                        .toList())
                .containsExactly(5L, 10L, 20L, 40L, 60L, 60L, 60L);
        assertThat(new NextRetirement.Abort(
                                "s", 0, NextRetirement.SCALE_DOWN, Reason.BUSY, "", t, Optional.empty(), 2, 1)
                        .retryAt(Duration.ofMinutes(45)))
                .as("capped")
                .contains(t.plus(NextRetirement.LONGEST_COOL_DOWN));
    }

    @Test
    void aBlockedReplicaIsRetriedOnceTheSpecChanges() {
        NextRetirement.Abort blocked = abort(SERVER_2, Reason.BUSY, T0, null, 3);
        NextRetirement.RetryPolicy edited =
                new NextRetirement.RetryPolicy(Optional.empty(), COOL_DOWN, GENERATION + 1, 0);

        assertThat(begun(NextRetirement.decide(
                        List.of(), List.of(blocked), List.of(SERVER_2), List.of(), edited, T0.plusSeconds(1))))
                .containsExactly("r2 Surplus #1");
    }

    @Test
    void anAbortedRecordStaysOnRecordWhileItsReplicaIsStillToLeaveAndNotRetried() {
        RetirementRecord aborted = record(abortedAt(T0.plusSeconds(100), Reason.BUSY));

        assertThat(NextRetirement.decide(
                                List.of(aborted),
                                List.of(),
                                List.of(SERVER_2),
                                List.of(),
                                NO_RETRY,
                                T0.plusSeconds(101))
                        .keptAborted())
                .containsExactly(aborted);
        assertThat(NextRetirement.decide(
                                List.of(aborted),
                                List.of(),
                                List.of(),
                                List.of(new NextRetirement.Replica("server", 2)),
                                NO_RETRY,
                                T0.plusSeconds(101))
                        .keptAborted())
                .as("a rollout's turn still to come")
                .containsExactly(aborted);
        assertThat(NextRetirement.decide(
                                List.of(aborted), List.of(), List.of(), List.of(), NO_RETRY, T0.plusSeconds(101))
                        .keptAborted())
                .as("no longer to leave")
                .isEmpty();
        assertThat(NextRetirement.decide(
                                List.of(aborted),
                                List.of(),
                                List.of(SERVER_2),
                                List.of(),
                                NO_RETRY,
                                T0.plusSeconds(400))
                        .keptAborted())
                .as("retried: the new record replaces it")
                .isEmpty();
    }

    @Test
    void theAbortsKeptAreOnePerReplicaTheLatestWinsAndOnlyWhileTheReplicaIsStillToLeave() {
        Instant t = T0.plusSeconds(100);
        NextRetirement.Abort olderOfServer2 = abort(SERVER_2, Reason.BUSY, T0, null);
        NextRetirement.Abort dropped = abort(DROPPED_0, Reason.NO_GAUGE_LIST, T0, null);
        RetirementRecord latest = new RetirementRecord(abortedAt(t, Reason.READ_FAILED), "", Optional.of("t1"), 2);

        List<NextRetirement.Abort> kept = NextRetirement.outstanding(
                List.of(latest), List.of(olderOfServer2, dropped), List.of(SERVER_2, SERVER_1), List.of(), GENERATION);

        assertThat(kept)
                .containsExactly(new NextRetirement.Abort(
                        "server",
                        2,
                        latest.retirement().cause(),
                        Reason.READ_FAILED,
                        "held",
                        t,
                        Optional.of("t1"),
                        2,
                        GENERATION));
        assertThat(NextRetirement.outstanding(List.of(latest), kept, List.of(SERVER_2), List.of(), GENERATION + 1))
                .as("read back on a later pass, the abort keeps its generation")
                .isEqualTo(kept);
        assertThat(NextRetirement.outstanding(
                        List.of(record(inProgress())),
                        List.of(olderOfServer2),
                        List.of(SERVER_2),
                        List.of(),
                        GENERATION))
                .as("a retry under way ends the abort it retries")
                .isEmpty();
    }

    @Test
    void aReplicaIsHeldWhileAReductionIsUnderWayOrKeptItAfterAnAbortButARolloutHoldsNothing() {
        NextRetirement.Abort refused =
                abort(candidate("prefill", 1, NextRetirement.Purpose.REDUCTION), Reason.DISAGGREGATED, T0, null);
        Retirement r = inProgress(1);
        Retirement rolling = new Retirement(
                r.role(),
                0,
                NextRetirement.ROLLOUT,
                r.targets(),
                r.answering(),
                r.standingHold(),
                r.state(),
                r.reason(),
                r.message(),
                r.startedAt(),
                r.phaseStartedAt(),
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());

        assertThat(NextRetirement.held(List.of(record(inProgress()), record(rolling)), List.of(refused)))
                .isEqualTo(Map.of("server", Set.of(2), "prefill", Set.of(1)));
        assertThat(NextRetirement.rollingOut(List.of(record(inProgress()), record(rolling))))
                .isEqualTo(Map.of("server", Set.of(0)));
        assertThat(NextRetirement.held(List.of(record(completed())), List.of())).isEmpty();
        assertThat(NextRetirement.held(List.of(record(abortedAt(T0, Reason.NO_LONGER_WANTED))), List.of()))
                .as("given back: wanted again")
                .isEmpty();
    }

    @Test
    void aRolloutPassesOverTheReplicasItMayNotRetryYet() {
        NextRetirement.Abort cooling = new NextRetirement.Abort(
                "server", 2, NextRetirement.ROLLOUT, Reason.BUSY, "", T0, Optional.empty(), 1, GENERATION);
        NextRetirement.Abort reduction = abort(SERVER_1, Reason.BUSY, T0, null);

        assertThat(NextRetirement.rolloutWaiting(List.of(cooling, reduction), NO_RETRY, T0.plusSeconds(1)))
                .isEqualTo(Map.of("server", Set.of(2)));
        assertThat(NextRetirement.rolloutWaiting(List.of(cooling), NO_RETRY, T0.plus(COOL_DOWN)))
                .isEmpty();
    }

    @ParameterizedTest(name = "a retirement past its deletion runs to its end even when no longer wanted: {0}")
    @MethodSource("pastDeletion")
    void pastTheDeletionNothingIsCancelled(RetirementState state) {
        Retirement r = inProgress();
        Retirement late = new Retirement(
                r.role(),
                r.ordinal(),
                r.cause(),
                r.targets(),
                r.answering(),
                r.standingHold(),
                state,
                Reason.PROVEN_IDLE,
                "deleting",
                r.startedAt(),
                T0.plusSeconds(5),
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());

        assertThat(NextRetirement.decide(
                                List.of(record(late)), List.of(), List.of(), List.of(), NO_RETRY, T0.plusSeconds(6))
                        .advance())
                .hasSize(1);
        assertThat(MACHINE.cancel(late, T0.plusSeconds(6)).actions()).isEmpty();
    }

    static Stream<RetirementState> pastDeletion() {
        return Stream.of(RetirementState.Deleting, RetirementState.Settling);
    }

    @ParameterizedTest(name = "cancel during {0} restores the members and never deletes")
    @MethodSource("beforeDeletion")
    void cancelGivesTheReplicaBack(RetirementState state) {
        Retirement r = inProgress();
        Retirement current = new Retirement(
                r.role(),
                r.ordinal(),
                r.cause(),
                r.targets(),
                r.answering(),
                r.standingHold(),
                state,
                Reason.BUSY,
                "busy",
                r.startedAt(),
                T0.plusSeconds(5),
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());

        RetirementMachine.Step step = MACHINE.cancel(current, T0.plusSeconds(7));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(Reason.NO_LONGER_WANTED);
        assertThat(step.retirement().phaseStartedAt()).isEqualTo(T0.plusSeconds(7));
        assertThat(step.actions()).contains(new Action.Restore(r.targets())).noneMatch(a -> a instanceof Action.Delete);
    }

    static Stream<RetirementState> beforeDeletion() {
        return Stream.of(RetirementState.Withdrawing, RetirementState.Draining);
    }

    @ParameterizedTest(name = "a member another party is deleting counts as lost: {0}")
    @MethodSource("beforeDeletion")
    void aTerminatingMemberAbortsBeforeTheDeletion(RetirementState state) {
        Retirement r = inProgress();
        Retirement current = new Retirement(
                r.role(),
                r.ordinal(),
                r.cause(),
                r.targets(),
                r.answering(),
                r.standingHold(),
                state,
                Reason.BUSY,
                "busy",
                r.startedAt(),
                T0.plusSeconds(5),
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());
        Observation seen = RetirementMachineTest.seen(T0.plusSeconds(6), RetirementMachineTest.CLEAR, Map.of());
        Map<String, Observation.Present> members = new HashMap<>(seen.members());
        Member leader = RetirementMachineTest.LEADER;
        members.put(leader.name(), new Observation.Present(leader.uid(), leader.containerId(), true));

        RetirementMachine.Step step = RetirementMachineTest.step(
                current, new Observation(seen.now(), members, seen.withdrawal(), seen.reads()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(Reason.TERMINATED_OUTSIDE);
        assertThat(step.actions()).noneMatch(a -> a instanceof Action.Delete);
    }
}
