package dev.ebb.operator.retire;

import static dev.ebb.operator.retire.NextRetirementTest.AbortRow.aborted;
import static dev.ebb.operator.retire.RetirementFrom.from;
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
        return from(RetirementMachineTest.draining()).ordinal(ordinal).get();
    }

    private static Retirement inProgress() {
        return inProgress(2);
    }

    private static Retirement abortedAt(Instant at, Reason reason) {
        return from(inProgress())
                .state(RetirementState.Aborted, at, reason, "held")
                .get();
    }

    private static Retirement completed() {
        return from(inProgress())
                .state(RetirementState.Completed, T0.plusSeconds(10), Reason.COMPLETED, "done")
                .get();
    }

    /** An abort kept from before, by named fields: of a reduction, answering no token, the first in a row. */
    record AbortRow(
            NextRetirement.Candidate replica, Reason reason, Instant when, Optional<String> token, int attempts) {
        static AbortRow aborted(NextRetirement.Candidate replica, Reason reason, Instant when) {
            return new AbortRow(replica, reason, when, Optional.empty(), 1);
        }

        /** It answered this value of the retry annotation. */
        AbortRow answering(String retryToken) {
            return new AbortRow(replica, reason, when, Optional.of(retryToken), attempts);
        }

        /** It is the last of this many aborts in a row. */
        AbortRow inARow(int count) {
            return new AbortRow(replica, reason, when, token, count);
        }

        NextRetirement.Abort get() {
            return new NextRetirement.Abort(
                    replica.role(),
                    replica.ordinal(),
                    NextRetirement.SCALE_DOWN,
                    reason,
                    "held",
                    when,
                    token,
                    attempts,
                    GENERATION);
        }
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

    /**
     * Candidates server r2 then r1 with the aborts kept from before, by named fields: a row begins nothing, with no
     * retry asked and no retry to wait for, until it says otherwise.
     */
    record HeldBack(
            String title,
            List<AbortRow> earlier,
            NextRetirement.RetryPolicy retry,
            Instant now,
            List<String> begins,
            Optional<Instant> soonestRetry) {
        static HeldBack row(String title) {
            return new HeldBack(title, List.of(), NO_RETRY, T0, List.of(), Optional.empty());
        }

        HeldBack after(AbortRow... aborts) {
            return new HeldBack(title, List.of(aborts), retry, now, begins, soonestRetry);
        }

        /** The retry annotation carries this value. */
        HeldBack asked(String token) {
            return new HeldBack(title, earlier, policy(token, 0), now, begins, soonestRetry);
        }

        HeldBack passAt(Instant at) {
            return new HeldBack(title, earlier, retry, at, begins, soonestRetry);
        }

        /** The retirements the pass begins, in order, as begun names them. */
        HeldBack begins(String... plans) {
            return new HeldBack(title, earlier, retry, now, List.of(plans), soonestRetry);
        }

        HeldBack soonestRetry(Instant at) {
            return new HeldBack(title, earlier, retry, now, begins, Optional.of(at));
        }

        @Override
        public String toString() {
            return title;
        }
    }

    static Stream<HeldBack> heldBack() {
        Instant t = T0.plusSeconds(100);
        return Stream.of(
                HeldBack.row("a refused replica never blocks the next candidate")
                        .after(aborted(SERVER_2, Reason.DISAGGREGATED, t))
                        .passAt(t.plusSeconds(1))
                        .begins("r1 ScaleDown #1"),
                HeldBack.row("nor one cooling down; the wait is for its cool-down")
                        .after(aborted(SERVER_2, Reason.BUSY, t))
                        .passAt(t.plusSeconds(299))
                        .begins("r1 ScaleDown #1")
                        .soonestRetry(t.plus(COOL_DOWN)),
                HeldBack.row("cool-down reached exactly: retried as surplus, the second attempt")
                        .after(aborted(SERVER_2, Reason.BUSY, t))
                        .passAt(t.plus(COOL_DOWN))
                        .begins("r2 Surplus #2", "r1 ScaleDown #1"),
                HeldBack.row("a second abort in a row waits twice as long")
                        .after(aborted(SERVER_2, Reason.BUSY, t).inARow(2))
                        .passAt(t.plus(COOL_DOWN).plusSeconds(1))
                        .begins("r1 ScaleDown #1")
                        .soonestRetry(t.plus(COOL_DOWN.multipliedBy(2))),
                HeldBack.row("and is retried then, as the third attempt")
                        .after(aborted(SERVER_2, Reason.BUSY, t).inARow(2))
                        .passAt(t.plus(COOL_DOWN.multipliedBy(2)))
                        .begins("r2 Surplus #3", "r1 ScaleDown #1"),
                HeldBack.row("three aborts in a row: still retried by itself, after 20 minutes")
                        .after(aborted(SERVER_2, Reason.BUSY, t).inARow(3))
                        .passAt(t.plus(Duration.ofMinutes(20)))
                        .begins("r2 Surplus #4", "r1 ScaleDown #1"),
                HeldBack.row("a blocked replica is retried on the user's word, counting afresh")
                        .after(aborted(SERVER_2, Reason.BUSY, t).answering("t1").inARow(3))
                        .asked("t2")
                        .passAt(t.plusSeconds(1))
                        .begins("r2 Surplus #1", "r1 ScaleDown #1"),
                HeldBack.row("refused: the cool-down never retries it")
                        .after(aborted(SERVER_2, Reason.NO_GAUGE_LIST, t))
                        .passAt(t.plus(Duration.ofDays(1)))
                        .begins("r1 ScaleDown #1"),
                HeldBack.row("refused, the user asks with a new token: retried")
                        .after(aborted(SERVER_2, Reason.NO_GAUGE_LIST, t).answering("t1"))
                        .asked("t2")
                        .passAt(t)
                        .begins("r2 Surplus #1", "r1 ScaleDown #1"),
                HeldBack.row("the token an abort already answered retries nothing")
                        .after(aborted(SERVER_2, Reason.BUSY, t).answering("t1"))
                        .asked("t1")
                        .passAt(t.plusSeconds(1))
                        .begins("r1 ScaleDown #1")
                        .soonestRetry(t.plus(COOL_DOWN)),
                HeldBack.row("a first token counts as a request")
                        .after(aborted(SERVER_2, Reason.BUSY, t))
                        .asked("t1")
                        .passAt(t.plusSeconds(1))
                        .begins("r2 Surplus #1", "r1 ScaleDown #1"),
                HeldBack.row(
                                "a member deleted by someone else: retried at once, counting afresh, since what is left is another replica")
                        .after(aborted(SERVER_2, Reason.TERMINATED_OUTSIDE, t).inARow(2))
                        .passAt(t.plusSeconds(1))
                        .begins("r2 Surplus #1", "r1 ScaleDown #1"),
                HeldBack.row("every candidate held back: the wait is for the soonest cool-down")
                        .after(
                                aborted(SERVER_2, Reason.BUSY, t),
                                aborted(SERVER_1, Reason.READ_FAILED, t.minusSeconds(50)))
                        .passAt(t.plusSeconds(1))
                        .soonestRetry(t.minusSeconds(50).plus(COOL_DOWN)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("heldBack")
    void eachReplicaIsHeldBackByItsOwnAbort(HeldBack row) {
        NextRetirement.Plan plan = NextRetirement.decide(
                List.of(),
                row.earlier().stream().map(AbortRow::get).toList(),
                List.of(SERVER_2, SERVER_1),
                List.of(),
                row.retry(),
                row.now());

        assertThat(begun(plan)).containsExactlyElementsOf(row.begins());
        assertThat(plan.soonestRetry()).isEqualTo(row.soonestRetry());
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
        NextRetirement.Abort blocked =
                aborted(SERVER_2, Reason.BUSY, T0).inARow(3).get();
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
        NextRetirement.Abort olderOfServer2 = aborted(SERVER_2, Reason.BUSY, T0).get();
        NextRetirement.Abort dropped =
                aborted(DROPPED_0, Reason.NO_GAUGE_LIST, T0).get();
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
        NextRetirement.Abort refused = aborted(
                        candidate("prefill", 1, NextRetirement.Purpose.REDUCTION), Reason.DISAGGREGATED, T0)
                .get();
        Retirement rolling =
                from(inProgress(1)).ordinal(0).cause(NextRetirement.ROLLOUT).get();

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
        NextRetirement.Abort reduction = aborted(SERVER_1, Reason.BUSY, T0).get();

        assertThat(NextRetirement.rolloutWaiting(List.of(cooling, reduction), NO_RETRY, T0.plusSeconds(1)))
                .isEqualTo(Map.of("server", Set.of(2)));
        assertThat(NextRetirement.rolloutWaiting(List.of(cooling), NO_RETRY, T0.plus(COOL_DOWN)))
                .isEmpty();
    }

    @ParameterizedTest(name = "a retirement past its deletion runs to its end even when no longer wanted: {0}")
    @MethodSource("pastDeletion")
    void pastTheDeletionNothingIsCancelled(RetirementState state) {
        Retirement r = inProgress();
        Retirement late = from(r).state(state, T0.plusSeconds(5), Reason.PROVEN_IDLE, "deleting")
                .get();

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
        Retirement current =
                from(r).state(state, T0.plusSeconds(5), Reason.BUSY, "busy").get();

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
        Retirement current =
                from(r).state(state, T0.plusSeconds(5), Reason.BUSY, "busy").get();
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
