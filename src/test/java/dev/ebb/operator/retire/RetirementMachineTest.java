package dev.ebb.operator.retire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.Reading;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

public class RetirementMachineTest {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    static final Member LEADER = new Member("qwen-server-r2-m0", "uid-0", "c-0");
    static final Member FOLLOWER = new Member("qwen-server-r2-m1", "uid-1", "c-1");
    static final List<Member> TARGETS = List.of(LEADER, FOLLOWER);
    static final Observation.Withdrawal CLEAR = new Observation.Withdrawal(true, true, Optional.of(false), false);

    static Observation seen(Instant at, Observation.Withdrawal withdrawal, Map<String, Reading> reads) {
        Map<String, Observation.Present> members = new HashMap<>();
        TARGETS.forEach(m -> members.put(m.name(), new Observation.Present(m.uid(), m.containerId())));
        return new Observation(at, members, withdrawal, reads);
    }

    static Observation reads(Instant at, Reading leader) {
        return seen(at, CLEAR, Map.of(LEADER.name(), leader));
    }

    static Retirement started() {
        return RetirementMachine.begin("server", 2, "ScaleDown", TARGETS, new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())), T0).retirement();
    }

    public static Retirement draining() {
        return RetirementMachine.step(started(), seen(T0.plusSeconds(1), CLEAR, Map.of())).retirement();
    }

    static Instant at(double seconds) {
        return T0.plus(Duration.ofMillis((long) (seconds * 1000)));
    }

    @Test
    void beginWithdrawsEveryReservedMemberAndAnnouncesIt() {
        RetirementMachine.Step step = RetirementMachine.begin("server", 2, "ScaleDown", TARGETS,
                new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())), T0);

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Withdrawing);
        assertThat(step.retirement().deadline()).isEqualTo(T0.plusSeconds(300));
        assertThat(step.actions()).contains(new Action.Withdraw(TARGETS));
        assertThat(step.actions()).noneMatch(a -> a instanceof Action.Delete);
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of(Reasons.DISAGGREGATED, "a decode replica reading zero may be handed work at any moment"),
                Arguments.of(Reasons.NO_GAUGE_LIST, "no gauge list for this engine"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void refusedReplicaAbortsAtOnceWithNothingWithdrawnOrDeleted(String reason, String message) {
        RetirementMachine.Step step = RetirementMachine.begin("d", 0, "ScaleDown", TARGETS, new Classification.Refused(reason, message), T0);

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(reason);
        assertThat(step.actions()).noneMatch(a -> a instanceof Action.Withdraw || a instanceof Action.Delete);
    }

    static Stream<Arguments> withdrawalHolds() {
        return Stream.of(
                Arguments.of(new Observation.Withdrawal(false, true, Optional.of(false), false), Reasons.DIRECT_SERVICE_CONNECTIONS),
                Arguments.of(new Observation.Withdrawal(true, false, Optional.of(false), false), Reasons.ENDPOINTS_STILL_LIST),
                Arguments.of(new Observation.Withdrawal(true, true, Optional.empty(), false), Reasons.ROUTER_UNAVAILABLE),
                Arguments.of(new Observation.Withdrawal(true, true, Optional.of(true), false), Reasons.ROUTER_STILL_SELECTS),
                Arguments.of(new Observation.Withdrawal(true, true, Optional.of(false), true), Reasons.RECENT_DISPATCH));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("withdrawalHolds")
    void withdrawalHoldsUntilItsBudgetThenAbortsKeepingEverything(Observation.Withdrawal withdrawal, String reason) {
        RetirementMachine.Step held = RetirementMachine.step(started(), seen(at(29.999), withdrawal, Map.of()));
        RetirementMachine.Step aborted = RetirementMachine.step(held.retirement(), seen(at(30), withdrawal, Map.of()));

        assertThat(held.retirement().state()).isEqualTo(RetirementState.Withdrawing);
        assertThat(held.retirement().reason()).isEqualTo(reason);
        assertThat(held.actions()).containsExactly(new Action.Announce(true, reason, held.retirement().message()));
        assertThat(aborted.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(aborted.retirement().reason()).isEqualTo(reason);
        assertThat(aborted.actions()).contains(new Action.Restore(TARGETS)).noneMatch(a -> a instanceof Action.Delete);
    }

    @Test
    void confirmedWithdrawalStartsDrainingAndAsksForReads() {
        RetirementMachine.Step step = RetirementMachine.step(started(), seen(at(2), CLEAR, Map.of()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(step.retirement().phaseStartedAt()).isEqualTo(at(2));
        assertThat(step.actions()).contains(new Action.ReadMembers(List.of(LEADER.name())));
    }

    @Test
    void twoIdleReadsInARowDeleteEveryReservedMember() {
        RetirementMachine.Step first = RetirementMachine.step(draining(), reads(at(3), new Reading.Idle()));
        RetirementMachine.Step second = RetirementMachine.step(first.retirement(), reads(at(4), new Reading.Idle()));

        assertThat(first.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(first.actions()).noneMatch(a -> a instanceof Action.Delete);
        assertThat(second.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(second.actions()).contains(new Action.Delete(TARGETS));
    }

    static Stream<Arguments> readingsThatHold() {
        return Stream.of(
                Arguments.of(new Reading.Busy(3), Reasons.BUSY, "has 3 requests in flight"),
                Arguments.of(new Reading.Partial(List.of("vllm:num_requests_waiting")), Reasons.PARTIAL_ENVELOPE, "without vllm:num_requests_waiting"),
                Arguments.of(new Reading.Failed("the engine refused the connection"), Reasons.READ_FAILED, "refused the connection"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("readingsThatHold")
    void aReadThatIsNotIdleHoldsAndResetsTheRun(Reading reading, String reason, String message) {
        RetirementMachine.Step idle = RetirementMachine.step(draining(), reads(at(3), new Reading.Idle()));
        RetirementMachine.Step held = RetirementMachine.step(idle.retirement(), reads(at(4), reading));
        RetirementMachine.Step idleAgain = RetirementMachine.step(held.retirement(), reads(at(5), new Reading.Idle()));

        assertThat(held.retirement().reason()).isEqualTo(reason);
        assertThat(held.retirement().message()).contains(message);
        assertThat(held.retirement().reads().get(LEADER.name()).consecutiveIdle()).isZero();
        assertThat(idleAgain.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(idleAgain.actions()).noneMatch(a -> a instanceof Action.Delete);
    }

    @Test
    void busyReplicaAbortsAtTheDrainingBudgetExactly() {
        Retirement draining = draining();
        Instant phase = draining.phaseStartedAt();
        RetirementMachine.Step before = RetirementMachine.step(draining, reads(phase.plusSeconds(240).minusMillis(1), new Reading.Busy(1)));
        RetirementMachine.Step at = RetirementMachine.step(before.retirement(), reads(phase.plusSeconds(240), new Reading.Busy(1)));

        assertThat(before.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(at.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(at.retirement().reason()).isEqualTo(Reasons.BUSY);
        assertThat(at.actions()).contains(new Action.Restore(TARGETS));
    }

    @Test
    void wholeOperationBudgetAbortsBeforeTheDrainingOne() {
        RetirementMachine.Step held = RetirementMachine.step(started(), seen(at(29), new Observation.Withdrawal(true, false, Optional.of(false), false), Map.of()));
        Retirement lateDraining = RetirementMachine.step(held.retirement(), seen(at(29.5), CLEAR, Map.of())).retirement();

        RetirementMachine.Step at300 = RetirementMachine.step(lateDraining, reads(at(300), new Reading.Busy(1)));

        assertThat(at300.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(at300.retirement().reason()).isEqualTo(Reasons.BUDGET_EXHAUSTED);
    }

    @Test
    void containerRestartHoldsAndAnIdleReadOfTheNewEngineDoesNotCount() {
        Retirement idleOnce = RetirementMachine.step(draining(), reads(at(3), new Reading.Idle())).retirement();
        Map<String, Observation.Present> restarted = Map.of(
                LEADER.name(), new Observation.Present(LEADER.uid(), "c-0-new"),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId()));

        RetirementMachine.Step step = RetirementMachine.step(idleOnce, new Observation(at(4), restarted, CLEAR, Map.of(LEADER.name(), new Reading.Idle())));
        RetirementMachine.Step again = RetirementMachine.step(step.retirement(), new Observation(at(5), restarted, CLEAR, Map.of(LEADER.name(), new Reading.Idle())));

        assertThat(step.retirement().reason()).isEqualTo(Reasons.CONTAINER_RESTARTED);
        assertThat(again.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(again.actions()).noneMatch(a -> a instanceof Action.Delete);
    }

    @Test
    void memberDeletedBySomeoneElseAbortsTheOperation() {
        Map<String, Observation.Present> onlyLeader = Map.of(LEADER.name(), new Observation.Present(LEADER.uid(), LEADER.containerId()));

        RetirementMachine.Step step = RetirementMachine.step(draining(), new Observation(at(3), onlyLeader, CLEAR, Map.of()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(Reasons.TERMINATED_OUTSIDE);
        assertThat(step.retirement().message()).contains(FOLLOWER.name());
    }

    @Test
    void memberReplacedUnderTheSameNameAbortsTheOperation() {
        Map<String, Observation.Present> replaced = Map.of(
                LEADER.name(), new Observation.Present("uid-other", "c-9"),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId()));

        assertThat(RetirementMachine.step(draining(), new Observation(at(3), replaced, CLEAR, Map.of())).retirement().reason())
                .isEqualTo(Reasons.TERMINATED_OUTSIDE);
    }

    static Stream<Arguments> standingHolds() {
        return Stream.of(Reasons.TAKE_OVER, Reasons.NO_LEADER, Reasons.MULTIPLE_LEADERS, Reasons.CONFIGURATION_DISAGREEMENT,
                Reasons.SIZE_MISMATCH).map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("standingHolds")
    void replicaThatCannotBeReadIsHeldWithItsReasonAndAbortsAtTheBudget(String reason) {
        Retirement started = RetirementMachine.begin("s", 0, "ScaleDown", TARGETS, new Classification.Held(reason, "cannot read " + reason), T0)
                .retirement();
        Retirement draining = RetirementMachine.step(started, seen(at(1), CLEAR, Map.of())).retirement();

        RetirementMachine.Step held = RetirementMachine.step(draining, reads(at(2), new Reading.Idle()));
        RetirementMachine.Step heldAgain = RetirementMachine.step(held.retirement(), reads(at(3), new Reading.Idle()));
        RetirementMachine.Step end = RetirementMachine.step(heldAgain.retirement(), reads(at(241), new Reading.Idle()));

        assertThat(held.retirement().reason()).isEqualTo(reason);
        assertThat(heldAgain.actions()).noneMatch(a -> a instanceof Action.Delete);
        assertThat(end.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(end.retirement().reason()).isEqualTo(reason);
    }

    @Test
    void deletingSettlesAndCompletesWhenTheMembersAreGone() {
        Retirement deleting = RetirementMachine.step(RetirementMachine.step(draining(), reads(at(3), new Reading.Idle())).retirement(),
                reads(at(4), new Reading.Idle())).retirement();
        Retirement settling = RetirementMachine.step(deleting, seen(at(5), CLEAR, Map.of())).retirement();
        Map<String, Observation.Present> still = Map.of(LEADER.name(), new Observation.Present(LEADER.uid(), LEADER.containerId()));

        RetirementMachine.Step slow = RetirementMachine.step(settling, new Observation(at(35), still, CLEAR, Map.of()));
        RetirementMachine.Step done = RetirementMachine.step(slow.retirement(), new Observation(at(40), Map.of(), CLEAR, Map.of()));

        assertThat(settling.state()).isEqualTo(RetirementState.Settling);
        assertThat(slow.retirement().state()).isEqualTo(RetirementState.Settling);
        assertThat(slow.retirement().reason()).isEqualTo(Reasons.MEMBERS_GONE_SLOWLY);
        assertThat(slow.actions()).noneMatch(a -> a instanceof Action.Restore);
        assertThat(done.retirement().state()).isEqualTo(RetirementState.Completed);
    }

    @Test
    void nothingHappensAfterAnAbort() {
        Retirement aborted = RetirementMachine.step(started(), seen(at(30), new Observation.Withdrawal(false, true, Optional.empty(), false), Map.of()))
                .retirement();

        RetirementMachine.Step after = RetirementMachine.step(aborted, reads(at(31), new Reading.Idle()));

        assertThat(after.retirement()).isEqualTo(aborted);
        assertThat(after.actions()).isEmpty();
    }

    @Test
    void aPassWhoseReadHasNotLandedKeepsTheLastVerdictSoABusyHoldIsAnnouncedOnce() {
        Retirement current = draining();
        List<Action.Announce> announced = new java.util.ArrayList<>();
        for (int pass = 0; pass < 60; pass++) {
            Observation seen = pass % 2 == 0 ? reads(at(3 + pass), new Reading.Busy(2)) : seen(at(3 + pass), CLEAR, Map.of());
            RetirementMachine.Step step = RetirementMachine.step(current, seen);
            step.actions().stream().filter(a -> a instanceof Action.Announce).map(a -> (Action.Announce) a).forEach(announced::add);
            current = step.retirement();
            assertThat(current.reason()).isEqualTo(Reasons.BUSY);
            assertThat(current.message()).contains("has 2 requests in flight");
        }

        assertThat(announced).extracting(Action.Announce::reason).containsExactly(Reasons.BUSY);
    }

    @Test
    void aMemberNeverReadYetIsAwaitingReads() {
        RetirementMachine.Step step = RetirementMachine.step(draining(), seen(at(3), CLEAR, Map.of()));

        assertThat(step.retirement().reason()).isEqualTo(Reasons.AWAITING_READS);
    }
}
