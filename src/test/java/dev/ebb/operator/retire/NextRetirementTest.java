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

/** Which operation a deployment works on: one at a time, each aborted replica held back on its own until asked or cooled down. */
class NextRetirementTest {
    private static final Instant T0 = RetirementMachineTest.T0;
    private static final Duration COOL_DOWN = Duration.ofMinutes(5);
    private static final NextRetirement.Candidate SERVER_2 = new NextRetirement.Candidate("server", 2, true, "");
    private static final NextRetirement.Candidate SERVER_1 = new NextRetirement.Candidate("server", 1, true, "");
    private static final NextRetirement.Candidate DROPPED_0 = new NextRetirement.Candidate("old", 0, false, "");
    private static final NextRetirement.RetryPolicy NO_RETRY = new NextRetirement.RetryPolicy(Optional.empty(), Optional.empty(), COOL_DOWN);

    private static Retirement inProgress() {
        return RetirementMachineTest.draining();
    }

    private static Retirement abortedAt(Instant at, String reason) {
        Retirement r = inProgress();
        return new Retirement(r.role(), r.ordinal(), r.cause(), r.targets(), r.answering(), r.standingHold(), RetirementState.Aborted,
                reason, "held", r.startedAt(), at, r.reads(), r.dispatchBaseline());
    }

    private static Retirement completed() {
        Retirement r = inProgress();
        return new Retirement(r.role(), r.ordinal(), r.cause(), r.targets(), r.answering(), r.standingHold(), RetirementState.Completed,
                Reasons.COMPLETED, "done", r.startedAt(), T0.plusSeconds(10), r.reads(), r.dispatchBaseline());
    }

    private static NextRetirement.RetryPolicy asked(String requested, String used) {
        return new NextRetirement.RetryPolicy(Optional.ofNullable(requested), Optional.ofNullable(used), COOL_DOWN);
    }

    static Stream<Arguments> table() {
        Instant aborted = T0.plusSeconds(100);
        return Stream.of(
                Arguments.of("nothing on record, nothing to take away", Optional.empty(), List.of(), NO_RETRY, T0, "Nothing", null),
                Arguments.of("nothing on record: the first candidate starts", Optional.empty(), List.of(SERVER_2, SERVER_1), NO_RETRY, T0, "Begin", "ScaleDown"),
                Arguments.of("a dropped role's replica says so", Optional.empty(), List.of(DROPPED_0), NO_RETRY, T0, "Begin", "RoleDropped"),
                Arguments.of("in progress and still wanted: it goes on", Optional.of(inProgress()), List.of(SERVER_2), NO_RETRY, T0, "Advance", null),
                Arguments.of("in progress, no longer wanted: given back", Optional.of(inProgress()), List.of(), NO_RETRY, T0, "Cancel", null),
                Arguments.of("in progress, another replica is now next: given back", Optional.of(inProgress()), List.of(SERVER_1), NO_RETRY, T0, "Cancel", null),
                Arguments.of("completed: the next one starts", Optional.of(completed()), List.of(SERVER_1), NO_RETRY, T0, "Begin", "ScaleDown"),
                Arguments.of("aborted, nothing to take away any more: record cleared", Optional.of(abortedAt(aborted, Reasons.BUSY)), List.of(), NO_RETRY, aborted, "Nothing", null),
                Arguments.of("aborted, cooling down", Optional.of(abortedAt(aborted, Reasons.BUSY)), List.of(SERVER_2), NO_RETRY, aborted.plusSeconds(299), "Wait", null),
                Arguments.of("aborted, cool-down reached exactly: retried as surplus", Optional.of(abortedAt(aborted, Reasons.BUSY)), List.of(SERVER_2), NO_RETRY, aborted.plusSeconds(300), "Begin", "Surplus"),
                Arguments.of("refused: the cool-down never retries it", Optional.of(abortedAt(aborted, Reasons.DISAGGREGATED)), List.of(SERVER_2), NO_RETRY, aborted.plus(Duration.ofDays(1)), "Wait", null),
                Arguments.of("refused, the user asks with a new token: retried", Optional.of(abortedAt(aborted, Reasons.NO_GAUGE_LIST)), List.of(SERVER_2), asked("t2", "t1"), aborted, "Begin", "Surplus"),
                Arguments.of("the token this operation already answered starts nothing", Optional.of(abortedAt(aborted, Reasons.BUSY)), List.of(SERVER_2), asked("t1", "t1"), aborted.plusSeconds(1), "Wait", null),
                Arguments.of("a first token counts as a request", Optional.of(abortedAt(aborted, Reasons.BUSY)), List.of(SERVER_2), asked("t1", null), aborted.plusSeconds(1), "Begin", "Surplus"),
                Arguments.of("a retry of another replica is a scale-down", Optional.of(abortedAt(aborted, Reasons.BUSY)), List.of(SERVER_1), asked("t1", null), aborted.plusSeconds(1), "Begin", "ScaleDown"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void decides(String row, Optional<Retirement> record, List<NextRetirement.Candidate> candidates, NextRetirement.RetryPolicy retry,
            Instant now, String expected, String cause) {
        NextRetirement.Decision decision = NextRetirement.decide(record, List.of(), candidates, retry, now);

        assertThat(decision.getClass().getSimpleName()).isEqualTo(expected);
        if (decision instanceof NextRetirement.Begin begin) {
            assertThat(begin.cause()).isEqualTo(cause);
            assertThat(begin.candidate()).isEqualTo(candidates.get(0));
        }
        if (decision instanceof NextRetirement.Wait wait && !Reasons.refusal(record.orElseThrow().reason())) {
            assertThat(wait.retryAt()).contains(record.orElseThrow().phaseStartedAt().plus(COOL_DOWN));
        }
    }

    static Stream<Arguments> skips() {
        Instant aborted = T0.plusSeconds(100);
        return Stream.of(
                Arguments.of("a refused replica never blocks the next candidate", abortedAt(aborted, Reasons.DISAGGREGATED), aborted.plusSeconds(1)),
                Arguments.of("nor does one without a gauge list", abortedAt(aborted, Reasons.NO_GAUGE_LIST), aborted.plus(Duration.ofDays(1))),
                Arguments.of("nor one cooling down", abortedAt(aborted, Reasons.BUSY), aborted.plusSeconds(299)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("skips")
    void aHeldBackReplicaIsSkippedAndTheNextCandidateBegins(String row, Retirement abortedServer2, Instant now) {
        NextRetirement.Decision decision = NextRetirement.decide(Optional.of(abortedServer2), List.of(), List.of(SERVER_2, SERVER_1), NO_RETRY, now);

        assertThat(decision).isEqualTo(new NextRetirement.Begin(SERVER_1, NextRetirement.SCALE_DOWN));
    }

    private static NextRetirement.Abort abort(NextRetirement.Candidate replica, String reason, Instant at, String token) {
        return new NextRetirement.Abort(replica.role(), replica.ordinal(), reason, "held", at, Optional.ofNullable(token));
    }

    static Stream<Arguments> heldBack() {
        Instant t = T0.plusSeconds(100);
        return Stream.of(
                Arguments.of("an abort kept from before holds its replica back; the next candidate begins",
                        List.of(abort(SERVER_2, Reasons.DISAGGREGATED, t, null)), NO_RETRY, t.plusSeconds(1), new NextRetirement.Begin(SERVER_1, "ScaleDown")),
                Arguments.of("every candidate held back: wait for the soonest cool-down",
                        List.of(abort(SERVER_2, Reasons.BUSY, t, null), abort(SERVER_1, Reasons.READ_FAILED, t.minusSeconds(50), null)),
                        NO_RETRY, t.plusSeconds(1), new NextRetirement.Wait(Optional.of(t.minusSeconds(50).plus(COOL_DOWN)))),
                Arguments.of("every candidate refused: nothing to wait for but a request",
                        List.of(abort(SERVER_2, Reasons.DISAGGREGATED, t, null), abort(SERVER_1, Reasons.NO_GAUGE_LIST, t, null)),
                        NO_RETRY, t.plus(Duration.ofDays(1)), new NextRetirement.Wait(Optional.empty())),
                Arguments.of("a cooled-down replica comes back in its own order",
                        List.of(abort(SERVER_2, Reasons.BUSY, t, null), abort(SERVER_1, Reasons.BUSY, t, null)),
                        NO_RETRY, t.plus(COOL_DOWN), new NextRetirement.Begin(SERVER_2, "Surplus")),
                Arguments.of("a new token retries a refused replica",
                        List.of(abort(SERVER_2, Reasons.DISAGGREGATED, t, "t1"), abort(SERVER_1, Reasons.BUSY, t, "t1")),
                        asked("t2", null), t.plusSeconds(1), new NextRetirement.Begin(SERVER_2, "Surplus")),
                Arguments.of("the token an abort already answered retries nothing",
                        List.of(abort(SERVER_2, Reasons.DISAGGREGATED, t, "t2"), abort(SERVER_1, Reasons.BUSY, t, "t1")),
                        asked("t2", null), t.plusSeconds(1), new NextRetirement.Begin(SERVER_1, "Surplus")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("heldBack")
    void eachReplicaIsHeldBackByItsOwnAbort(String row, List<NextRetirement.Abort> earlier, NextRetirement.RetryPolicy retry, Instant now,
            NextRetirement.Decision expected) {
        assertThat(NextRetirement.decide(Optional.empty(), earlier, List.of(SERVER_2, SERVER_1), retry, now)).isEqualTo(expected);
    }

    @Test
    void theAbortsKeptAreOnePerReplicaTheLatestWinsAndOnlyWhileTheReplicaIsStillToLeave() {
        Instant t = T0.plusSeconds(100);
        NextRetirement.Abort olderOfServer2 = abort(SERVER_2, Reasons.BUSY, T0, null);
        NextRetirement.Abort dropped = abort(DROPPED_0, Reasons.NO_GAUGE_LIST, T0, null);
        Retirement latest = abortedAt(t, Reasons.READ_FAILED);

        List<NextRetirement.Abort> kept = NextRetirement.outstanding(Optional.of(latest), Optional.of("t1"), List.of(olderOfServer2, dropped),
                List.of(SERVER_2, SERVER_1));

        assertThat(kept).containsExactly(new NextRetirement.Abort("server", 2, Reasons.READ_FAILED, "held", t, Optional.of("t1")));
        assertThat(NextRetirement.outstanding(Optional.of(inProgress()), Optional.empty(), List.of(olderOfServer2), List.of(SERVER_2)))
                .as("a retry under way ends the abort it retries").isEmpty();
    }

    @Test
    void aReplicaIsHeldWhileARetirementIsUnderWayOrKeptItAfterAnAbort() {
        NextRetirement.Abort refused = abort(new NextRetirement.Candidate("prefill", 1, true, ""), Reasons.DISAGGREGATED, T0, null);

        assertThat(NextRetirement.held(Optional.of(inProgress()), List.of(refused))).isEqualTo(Map.of("server", Set.of(2), "prefill", Set.of(1)));
        assertThat(NextRetirement.held(Optional.of(completed()), List.of())).isEmpty();
        assertThat(NextRetirement.held(Optional.of(abortedAt(T0, Reasons.NO_LONGER_WANTED)),
                List.of(abort(SERVER_1, Reasons.NO_LONGER_WANTED, T0, null)))).as("given back: wanted again").isEmpty();
    }

    @ParameterizedTest(name = "a retirement past its deletion runs to its end even when no longer wanted: {0}")
    @MethodSource("pastDeletion")
    void pastTheDeletionNothingIsCancelled(RetirementState state) {
        Retirement r = inProgress();
        Retirement late = new Retirement(r.role(), r.ordinal(), r.cause(), r.targets(), r.answering(), r.standingHold(), state,
                Reasons.PROVEN_IDLE, "deleting", r.startedAt(), T0.plusSeconds(5), r.reads(), r.dispatchBaseline());

        assertThat(NextRetirement.decide(Optional.of(late), List.of(), List.of(), NO_RETRY, T0.plusSeconds(6))).isInstanceOf(NextRetirement.Advance.class);
        assertThat(RetirementMachine.cancel(late, T0.plusSeconds(6)).actions()).isEmpty();
    }

    static Stream<RetirementState> pastDeletion() {
        return Stream.of(RetirementState.Deleting, RetirementState.Settling);
    }

    @ParameterizedTest(name = "cancel during {0} restores the members and never deletes")
    @MethodSource("beforeDeletion")
    void cancelGivesTheReplicaBack(RetirementState state) {
        Retirement r = inProgress();
        Retirement current = new Retirement(r.role(), r.ordinal(), r.cause(), r.targets(), r.answering(), r.standingHold(), state,
                Reasons.BUSY, "busy", r.startedAt(), T0.plusSeconds(5), r.reads(), r.dispatchBaseline());

        RetirementMachine.Step step = RetirementMachine.cancel(current, T0.plusSeconds(7));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(Reasons.NO_LONGER_WANTED);
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
        Retirement current = new Retirement(r.role(), r.ordinal(), r.cause(), r.targets(), r.answering(), r.standingHold(), state,
                Reasons.BUSY, "busy", r.startedAt(), T0.plusSeconds(5), r.reads(), r.dispatchBaseline());
        Observation seen = RetirementMachineTest.seen(T0.plusSeconds(6), RetirementMachineTest.CLEAR, Map.of());
        Map<String, Observation.Present> members = new HashMap<>(seen.members());
        Member leader = RetirementMachineTest.LEADER;
        members.put(leader.name(), new Observation.Present(leader.uid(), leader.containerId(), true));

        RetirementMachine.Step step = RetirementMachineTest.step(current,
                new Observation(seen.now(), members, seen.withdrawal(), seen.reads()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(Reasons.TERMINATED_OUTSIDE);
        assertThat(step.actions()).noneMatch(a -> a instanceof Action.Delete);
    }
}
