package dev.ebb.operator.retire;

import static dev.ebb.operator.retire.SeenWithdrawal.withdrawal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.Reading;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

public class RetirementMachineTest {
    private static final RetirementMachine MACHINE = new RetirementMachine();
    /** Holds a person need not look at, which the Events tell as Normal; every other hold is a Warning. */
    private static final Set<String> TOLD_AS_NORMAL = Set.of(
            "AwaitingReads", "Busy", "RecentDispatch", "EndpointsStillList", "RouterStillSelects", "OpenConnections");

    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    static final Member LEADER = new Member("qwen-server-r2-m0", "uid-0", "c-0");
    static final Member FOLLOWER = new Member("qwen-server-r2-m1", "uid-1", "c-1");
    static final List<Member> TARGETS = List.of(LEADER, FOLLOWER);
    /** What the router had counted for the targets before their withdrawal. */
    static final Optional<Map<String, Double>> BASELINE = Optional.of(Map.of(LEADER.name(), 7.0, FOLLOWER.name(), 0.0));

    static final Observation.Withdrawal CLEAR = withdrawal()
            .routed()
            .endpointsClear(true)
            .routerSelects(false)
            .dispatches(LEADER, 7)
            .get();

    /** The withdrawal holding, and the router counting this many dispatches to the leader. */
    static SeenWithdrawal dispatched(double toLeader) {
        return withdrawal().routed().endpointsClear(true).routerSelects(false).dispatches(LEADER, toLeader);
    }

    static Observation seen(Instant at, Observation.Withdrawal withdrawal, Map<String, Reading> reads) {
        Map<String, Observation.Present> members = new HashMap<>();
        TARGETS.forEach(m -> members.put(m.name(), new Observation.Present(m.uid(), m.containerId())));
        return new Observation(at, members, withdrawal, reads);
    }

    static Observation seen(Instant at, SeenWithdrawal withdrawal, Map<String, Reading> reads) {
        return seen(at, withdrawal.get(), reads);
    }

    static Observation reads(Instant at, Reading leader) {
        return seen(at, CLEAR, Map.of(LEADER.name(), leader));
    }

    static Retirement started() {
        return started("ScaleDown");
    }

    static Retirement started(String cause) {
        return MACHINE.begin(
                        "server",
                        2,
                        cause,
                        TARGETS,
                        new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                        BASELINE,
                        Budgets.DRAINING,
                        T0)
                .retirement();
    }

    public static Retirement draining() {
        return draining("ScaleDown");
    }

    /** A retirement of this cause, withdrawn and draining. */
    static Retirement draining(String cause) {
        return step(started(cause), seen(T0.plusSeconds(1), CLEAR, Map.of())).retirement();
    }

    /** How long the endpoint change takes to reach every node, for deployments without a router. */
    static final Duration PROPAGATION = Duration.ofSeconds(5);
    /**
     * With a router, most cases here read at once after the withdrawal is confirmed, as with an engine whose front end
     * hides nothing; the front-end margin has cases of its own, with {@link #FRONT_END_LAG}.
     */
    static final Duration NO_LAG = Duration.ZERO;

    static final Duration FRONT_END_LAG = Duration.ofSeconds(5);

    /** Without a router, how long no request must reach a member before the peers connected to it are bystanders. */
    static final Duration QUIET_PEERS = Duration.ofSeconds(10);

    static RetirementMachine.Step step(Retirement current, Observation seen) {
        return MACHINE.step(current, seen, PROPAGATION, NO_LAG, QUIET_PEERS);
    }

    static RetirementMachine.Step lagging(Retirement current, Observation seen) {
        return MACHINE.step(current, seen, PROPAGATION, FRONT_END_LAG, QUIET_PEERS);
    }

    static Instant at(double seconds) {
        return T0.plus(Duration.ofMillis((long) (seconds * 1000)));
    }

    @Test
    void beginWithdrawsEveryReservedMemberAndAnnouncesIt() {
        RetirementMachine.Step step = MACHINE.begin(
                "server",
                2,
                "ScaleDown",
                TARGETS,
                new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                BASELINE,
                Budgets.DRAINING,
                T0);

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Withdrawing);
        assertThat(step.retirement().deadline()).isEqualTo(T0.plusSeconds(300));
        assertThat(step.actions()).contains(new Action.Withdraw(TARGETS));
        assertThat(step.actions()).noneMatch(a -> a instanceof Action.Delete);
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of(Reason.DISAGGREGATED, "a decode replica reading zero may be handed work at any moment"),
                Arguments.of(Reason.NO_GAUGE_LIST, "no gauge list for this engine"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void refusedReplicaAbortsAtOnceWithNothingWithdrawnOrDeleted(Reason reason, String message) {
        RetirementMachine.Step step = MACHINE.begin(
                "d",
                0,
                "ScaleDown",
                TARGETS,
                new Classification.Refused(reason, message),
                BASELINE,
                Budgets.DRAINING,
                T0);

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(reason);
        assertThat(step.actions()).noneMatch(a -> a instanceof Action.Withdraw || a instanceof Action.Delete);
    }

    @Test
    void followersLeftWithoutTheirLeaderAreDeletedAtOnceAndTheRecordSettlesLikeAnyOther() {
        RetirementMachine.Step step = MACHINE.begin(
                "server",
                2,
                "Rollout",
                List.of(FOLLOWER),
                new Classification.Unreachable("only followers are left"),
                Optional.of(Map.of()),
                Budgets.DRAINING,
                T0);
        RetirementMachine.Step gone = step(
                step(step.retirement(), seen(at(1), CLEAR, Map.of())).retirement(),
                new Observation(at(2), Map.of(), CLEAR, Map.of()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(step.retirement().reason()).isEqualTo(Reason.LEADER_GONE);
        assertThat(step.actions())
                .contains(new Action.Delete(List.of(FOLLOWER)))
                .noneMatch(a -> a instanceof Action.Withdraw || a instanceof Action.ReadMembers);
        assertThat(gone.retirement().state()).isEqualTo(RetirementState.Completed);
    }

    static Stream<Arguments> withdrawalHolds() {
        return Stream.of(
                Arguments.of(withdrawal().serving(FOLLOWER).endpointsClear(true), Reason.STILL_LABELLED_SERVING),
                Arguments.of(withdrawal(), Reason.ENDPOINTS_UNKNOWN),
                Arguments.of(withdrawal().endpointsClear(false), Reason.ENDPOINTS_STILL_LIST),
                Arguments.of(
                        withdrawal()
                                .routed()
                                .serving(FOLLOWER)
                                .endpointsClear(true)
                                .routerSelects(false),
                        Reason.STILL_LABELLED_SERVING),
                Arguments.of(withdrawal().routed().routerSelects(false), Reason.ENDPOINTS_UNKNOWN),
                Arguments.of(
                        withdrawal().routed().endpointsClear(false).routerSelects(false), Reason.ENDPOINTS_STILL_LIST),
                Arguments.of(withdrawal().routed().endpointsClear(true), Reason.ROUTER_UNAVAILABLE),
                Arguments.of(
                        withdrawal().routed().endpointsClear(true).routerSelects(true), Reason.ROUTER_STILL_SELECTS));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("withdrawalHolds")
    void withdrawalHoldsUntilItsBudgetThenAbortsKeepingEverything(SeenWithdrawal withdrawal, Reason reason) {
        RetirementMachine.Step held = step(started(), seen(at(29.999), withdrawal, Map.of()));
        RetirementMachine.Step aborted = step(held.retirement(), seen(at(30), withdrawal, Map.of()));

        assertThat(held.retirement().state()).isEqualTo(RetirementState.Withdrawing);
        assertThat(held.retirement().reason()).isEqualTo(reason);
        assertThat(held.actions())
                .contains(new Action.Announce(
                        !TOLD_AS_NORMAL.contains(reason.wire()),
                        reason,
                        held.retirement().message()))
                .noneMatch(a -> a instanceof Action.Delete);
        assertThat(aborted.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(aborted.retirement().reason()).isEqualTo(reason);
        assertThat(aborted.actions()).contains(new Action.Restore(TARGETS)).noneMatch(a -> a instanceof Action.Delete);
    }

    /**
     * When the router itself is asked to drop the targets: only once every target carries serving=false, and then on
     * every pass it still lists one or cannot say, whatever else holds the withdrawal; never without a router.
     */
    static Stream<Arguments> routerAsked() {
        return Stream.of(
                Arguments.of(
                        "router still selects",
                        withdrawal().routed().endpointsClear(true).routerSelects(true),
                        true),
                Arguments.of("router cannot say", withdrawal().routed().endpointsClear(true), true),
                Arguments.of(
                        "router selects, endpoints still list",
                        withdrawal().routed().endpointsClear(false).routerSelects(true),
                        true),
                Arguments.of(
                        "router selects, endpoints unknown",
                        withdrawal().routed().routerSelects(true),
                        true),
                Arguments.of(
                        "a target not yet labelled withdrawn",
                        withdrawal()
                                .routed()
                                .serving(FOLLOWER)
                                .endpointsClear(true)
                                .routerSelects(true),
                        false),
                Arguments.of(
                        "router dropped them, endpoints still list",
                        withdrawal().routed().endpointsClear(false).routerSelects(false),
                        false),
                Arguments.of("no router", withdrawal().endpointsClear(true), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routerAsked")
    void theRouterIsAskedToDropTheTargetsOnlyOnceTheirWithdrawalIsWritten(
            String title, SeenWithdrawal withdrawal, boolean asked) {
        RetirementMachine.Step first = step(started(), seen(at(1), withdrawal, Map.of()));
        RetirementMachine.Step again = step(first.retirement(), seen(at(2), withdrawal, Map.of()));
        RetirementMachine.Step lost = step(draining(), seen(at(3), withdrawal, Map.of()));

        for (RetirementMachine.Step step : List.of(first, again, lost)) {
            if (asked) {
                assertThat(step.actions()).contains(new Action.Unroute(TARGETS));
            } else {
                assertThat(step.actions()).noneMatch(a -> a instanceof Action.Unroute);
            }
        }
    }

    @Test
    void aConfirmedWithdrawalAndOneAwaitingItsBaselineNeverAskTheRouter() {
        RetirementMachine.Step confirmed = step(started(), seen(at(1), CLEAR, Map.of()));
        Retirement awaiting = MACHINE.begin(
                        "server",
                        2,
                        "ScaleDown",
                        TARGETS,
                        new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                        Optional.empty(),
                        Budgets.DRAINING,
                        T0)
                .retirement();
        RetirementMachine.Step stillAwaiting =
                step(awaiting, seen(at(1), withdrawal().routed().endpointsClear(true), Map.of()));

        assertThat(confirmed.actions()).noneMatch(a -> a instanceof Action.Unroute);
        assertThat(stillAwaiting.actions()).noneMatch(a -> a instanceof Action.Unroute);
    }

    /** Counts per target member against those read before the withdrawal; one below it is a router that restarted. */
    static Stream<Arguments> dispatchCounts() {
        return Stream.of(
                Arguments.of(Map.of(LEADER.name(), 7.0), false),
                Arguments.of(Map.of(LEADER.name(), 7.0, FOLLOWER.name(), 0.0), false),
                Arguments.of(Map.of(), false),
                Arguments.of(Map.of(LEADER.name(), 8.0), true),
                Arguments.of(Map.of(LEADER.name(), 0.0), false),
                Arguments.of(Map.of(LEADER.name(), 3.0), true),
                Arguments.of(Map.of(LEADER.name(), 7.0, FOLLOWER.name(), 1.0), true),
                Arguments.of(Map.of(LEADER.name(), 7.0, "qwen-server-r2-m9", 1.0), true));
    }

    @ParameterizedTest(name = "{0} dispatched: {1}")
    @MethodSource("dispatchCounts")
    void aDispatchCountsOnlyWhenItDiffersFromTheCountReadBeforeTheWithdrawal(
            Map<String, Double> now, boolean dispatched) {
        RetirementMachine.Step step = step(
                started(),
                seen(
                        at(2),
                        withdrawal()
                                .routed()
                                .endpointsClear(true)
                                .routerSelects(false)
                                .dispatches(now),
                        Map.of()));

        assertThat(step.retirement().reason()).isEqualTo(dispatched ? Reason.RECENT_DISPATCH : Reason.WITHDRAWN);
    }

    @Test
    void withoutDispatchCountsReadBeforeTheWithdrawalItIsNeverConfirmed() {
        Retirement blind = MACHINE.begin(
                        "server",
                        2,
                        "ScaleDown",
                        TARGETS,
                        new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                        Optional.empty(),
                        Budgets.DRAINING,
                        T0)
                .retirement();

        RetirementMachine.Step held = step(blind, seen(at(2), CLEAR, Map.of()));
        RetirementMachine.Step aborted = step(held.retirement(), seen(at(30), CLEAR, Map.of()));

        assertThat(held.retirement().reason()).isEqualTo(Reason.ROUTER_UNAVAILABLE);
        assertThat(held.retirement().message()).contains("before the withdrawal");
        assertThat(aborted.retirement().state()).isEqualTo(RetirementState.Aborted);
    }

    @Test
    void aRouterThatCannotBeReadAtTheStartHasItsCountsTakenWhenItAnswersAndOnlyThenIsTheReplicaWithdrawn() {
        RetirementMachine.Step begun = MACHINE.begin(
                "server",
                2,
                "ScaleDown",
                TARGETS,
                new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                Optional.empty(),
                Budgets.DRAINING,
                T0);
        RetirementMachine.Step stillDown = step(
                begun.retirement(),
                seen(at(2), withdrawal().routed().serving(LEADER, FOLLOWER).endpointsClear(true), Map.of()));
        RetirementMachine.Step counted = step(
                stillDown.retirement(),
                seen(
                        at(3),
                        withdrawal()
                                .routed()
                                .serving(LEADER, FOLLOWER)
                                .endpointsClear(true)
                                .routerSelects(true)
                                .dispatches(LEADER, 7),
                        Map.of()));

        assertThat(begun.actions()).noneMatch(a -> a instanceof Action.Withdraw);
        assertThat(begun.retirement().reason()).isEqualTo(Reason.ROUTER_UNAVAILABLE);
        assertThat(stillDown.actions()).noneMatch(a -> a instanceof Action.Withdraw);
        assertThat(stillDown.retirement().state()).isEqualTo(RetirementState.Withdrawing);
        assertThat(counted.retirement().dispatchBaseline()).contains(Map.of(LEADER.name(), 7.0, FOLLOWER.name(), 0.0));
        assertThat(counted.actions()).contains(new Action.Withdraw(TARGETS));
        assertThat(step(counted.retirement(), seen(at(4), CLEAR, Map.of()))
                        .retirement()
                        .state())
                .isEqualTo(RetirementState.Draining);
        assertThat(step(counted.retirement(), seen(at(4), dispatched(8.0), Map.of()))
                        .retirement()
                        .reason())
                .isEqualTo(Reason.RECENT_DISPATCH);
    }

    @Test
    void aDispatchMadeWhileTheRouterLearnsOfTheWithdrawalHoldsUntilTheCountsStopMoving() {
        RetirementMachine.Step late = step(started(), seen(at(1), dispatched(8.0), Map.of()));
        RetirementMachine.Step still = step(late.retirement(), seen(at(2), dispatched(9.0), Map.of()));
        RetirementMachine.Step settled = step(still.retirement(), seen(at(3), dispatched(9.0), Map.of()));

        assertThat(late.retirement().reason()).isEqualTo(Reason.RECENT_DISPATCH);
        assertThat(still.retirement().reason()).isEqualTo(Reason.RECENT_DISPATCH);
        assertThat(settled.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(step(settled.retirement(), seen(at(4), dispatched(10.0), Map.of()))
                        .retirement()
                        .reason())
                .isEqualTo(Reason.WITHDRAWAL_LOST);
    }

    @Test
    void aRouterThatKeepsDispatchingToTheTargetHoldsItUntilTheBudgetAborts() {
        Retirement current = started();
        for (int second = 1; second < 30; second++) {
            current = step(current, seen(at(second), dispatched(7.0 + second), Map.of()))
                    .retirement();
            assertThat(current.reason()).isEqualTo(Reason.RECENT_DISPATCH);
        }
        RetirementMachine.Step aborted = step(current, seen(at(30), dispatched(40.0), Map.of()));

        assertThat(aborted.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(aborted.retirement().reason()).isEqualTo(Reason.RECENT_DISPATCH);
        assertThat(aborted.actions()).contains(new Action.Restore(TARGETS)).noneMatch(a -> a instanceof Action.Delete);
    }

    @Test
    void aMemberFoundServingIsWithdrawnAgain() {
        RetirementMachine.Step step = step(
                started(),
                seen(
                        at(1),
                        withdrawal()
                                .routed()
                                .serving(FOLLOWER)
                                .endpointsClear(true)
                                .routerSelects(false),
                        Map.of()));

        assertThat(step.actions()).contains(new Action.Withdraw(List.of(FOLLOWER)));
    }

    static Stream<Arguments> relapses() {
        return Stream.of(
                Arguments.of(
                        withdrawal()
                                .routed()
                                .serving(LEADER)
                                .endpointsClear(true)
                                .routerSelects(false),
                        "does not carry"),
                Arguments.of(withdrawal().routed().routerSelects(false), "no EndpointSlice"),
                Arguments.of(withdrawal().routed().endpointsClear(false).routerSelects(false), "still lists"),
                Arguments.of(withdrawal().routed().endpointsClear(true), "cannot say"),
                Arguments.of(withdrawal().routed().endpointsClear(true).routerSelects(true), "still selects"),
                Arguments.of(dispatched(9), "dispatch"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("relapses")
    void aWithdrawalLostWhileDrainingHoldsAndTheIdleReadsStartOver(SeenWithdrawal relapse, String message) {
        Retirement idleOnce = step(draining(), reads(at(3), new Reading.Idle())).retirement();

        RetirementMachine.Step lost = step(idleOnce, seen(at(4), relapse, Map.of(LEADER.name(), new Reading.Idle())));
        RetirementMachine.Step back = step(lost.retirement(), reads(at(5), new Reading.Idle()));
        RetirementMachine.Step proven = step(back.retirement(), reads(at(6), new Reading.Idle()));

        assertThat(lost.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(lost.retirement().reason()).isEqualTo(Reason.WITHDRAWAL_LOST);
        assertThat(lost.retirement().message()).contains(message);
        assertThat(lost.retirement().reads().get(LEADER.name()).consecutiveIdle())
                .isZero();
        assertThat(lost.actions())
                .contains(new Action.ReadMembers(List.of(LEADER.name())))
                .noneMatch(a -> a instanceof Action.Delete);
        assertThat(back.actions())
                .as("one idle read since the relapse is not two")
                .noneMatch(a -> a instanceof Action.Delete);
        assertThat(proven.actions()).contains(new Action.Delete(TARGETS));
    }

    @Test
    void aWithdrawalStillLostAtTheDrainingBudgetAbortsAndRestores() {
        Retirement draining = draining();
        SeenWithdrawal selected = withdrawal().routed().endpointsClear(true).routerSelects(true);

        RetirementMachine.Step end =
                step(draining, seen(draining.phaseStartedAt().plus(Budgets.DRAINING), selected, Map.of()));

        assertThat(end.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(end.retirement().reason()).isEqualTo(Reason.WITHDRAWAL_LOST);
        assertThat(end.actions()).contains(new Action.Restore(TARGETS));
    }

    @Test
    void confirmedWithdrawalStartsDrainingAndAsksForReads() {
        RetirementMachine.Step step = step(started(), seen(at(2), CLEAR, Map.of()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(step.retirement().phaseStartedAt()).isEqualTo(at(2));
        assertThat(step.actions()).contains(new Action.ReadMembers(List.of(LEADER.name())));
    }

    @Test
    void twoIdleReadsInARowDeleteEveryReservedMember() {
        RetirementMachine.Step first = step(draining(), reads(at(3), new Reading.Idle()));
        RetirementMachine.Step second = step(first.retirement(), reads(at(4), new Reading.Idle()));

        assertThat(first.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(first.actions()).noneMatch(a -> a instanceof Action.Delete);
        assertThat(second.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(second.actions()).contains(new Action.Delete(TARGETS));
    }

    @Test
    void idleReadsLessThanASecondApartCountOnce() {
        RetirementMachine.Step first = step(draining(), reads(at(3), new Reading.Idle()));
        RetirementMachine.Step tooSoon = step(first.retirement(), reads(at(3.5), new Reading.Idle()));
        RetirementMachine.Step backwards = step(tooSoon.retirement(), reads(at(2), new Reading.Idle()));
        RetirementMachine.Step aSecondOn = step(backwards.retirement(), reads(at(4), new Reading.Idle()));

        assertThat(List.of(tooSoon, backwards)).allSatisfy(step -> {
            assertThat(step.actions()).noneMatch(a -> a instanceof Action.Delete);
            assertThat(step.retirement().reads().get(LEADER.name()).consecutiveIdle())
                    .isEqualTo(1);
        });
        assertThat(aSecondOn.actions()).contains(new Action.Delete(TARGETS));
    }

    static Stream<Arguments> readingsThatHold() {
        return Stream.of(
                Arguments.of(new Reading.Busy(3), Reason.BUSY, "has 3 requests in flight"),
                Arguments.of(
                        new Reading.Partial(List.of("vllm:num_requests_waiting")),
                        Reason.PARTIAL_ENVELOPE,
                        "without vllm:num_requests_waiting"),
                Arguments.of(
                        new Reading.Failed("the engine refused the connection"),
                        Reason.READ_FAILED,
                        "refused the connection"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("readingsThatHold")
    void aReadThatIsNotIdleHoldsAndResetsTheRun(Reading reading, Reason reason, String message) {
        RetirementMachine.Step idle = step(draining(), reads(at(3), new Reading.Idle()));
        RetirementMachine.Step held = step(idle.retirement(), reads(at(4), reading));
        RetirementMachine.Step idleAgain = step(held.retirement(), reads(at(5), new Reading.Idle()));

        assertThat(held.retirement().reason()).isEqualTo(reason);
        assertThat(held.retirement().message()).contains(message);
        assertThat(held.retirement().reads().get(LEADER.name()).consecutiveIdle())
                .isZero();
        assertThat(idleAgain.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(idleAgain.actions()).noneMatch(a -> a instanceof Action.Delete);
    }

    @Test
    void busyReplicaAbortsAtTheDrainingBudgetExactly() {
        Retirement draining = draining();
        Instant phase = draining.phaseStartedAt();
        RetirementMachine.Step before =
                step(draining, reads(phase.plusSeconds(240).minusMillis(1), new Reading.Busy(1)));
        RetirementMachine.Step at = step(before.retirement(), reads(phase.plusSeconds(240), new Reading.Busy(1)));

        assertThat(before.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(at.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(at.retirement().reason()).isEqualTo(Reason.BUSY);
        assertThat(at.actions()).contains(new Action.Restore(TARGETS));
    }

    /**
     * The node's drain waits for the move, so a move is never kept back after an abort: its replica is deleted with its
     * grace, as the eviction would have, and the drain is held no longer than the drain budget.
     */
    @Test
    void aMoveOffALeavingNodeNotProvenIdleInTimeIsHandedToTheDrainRatherThanKept() {
        Retirement moving = draining(NextRetirement.NODE_MAINTENANCE);
        Instant phase = moving.phaseStartedAt();
        RetirementMachine.Step before =
                step(moving, reads(phase.plusSeconds(240).minusMillis(1), new Reading.Busy(1)));
        RetirementMachine.Step at = step(before.retirement(), reads(phase.plusSeconds(240), new Reading.Busy(1)));
        RetirementMachine.Step gone =
                step(at.retirement(), new Observation(phase.plusSeconds(250), Map.of(), CLEAR, Map.of()));

        assertThat(before.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(at.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(at.retirement().reason()).isEqualTo(Reason.HANDED_BACK);
        assertThat(at.retirement().message())
                .contains("not proven idle within 240 s")
                .contains("with its grace");
        assertThat(at.actions())
                .contains(new Action.Delete(TARGETS))
                .noneMatch(a -> a instanceof Action.Restore)
                .anySatisfy(a -> assertThat(a)
                        .isEqualTo(new Action.Announce(
                                true, Reason.HANDED_BACK, at.retirement().message())));
        assertThat(gone.retirement().state()).as("on as any deletion goes").isEqualTo(RetirementState.Settling);
    }

    @Test
    void aMoveTheNodeNoLongerNeedsGivesTheReplicaBackItsTraffic() {
        RetirementMachine.Step cancelled = MACHINE.cancel(draining(NextRetirement.NODE_MAINTENANCE), at(5));

        assertThat(cancelled.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(cancelled.actions())
                .contains(new Action.Restore(TARGETS))
                .noneMatch(a -> a instanceof Action.Delete);
    }

    @Test
    void aMoveOfAReplicaTheProtocolCannotDrainIsHandedToTheDrainAtOnce() {
        RetirementMachine.Step step = MACHINE.begin(
                "d",
                0,
                NextRetirement.NODE_MAINTENANCE,
                TARGETS,
                new Classification.Refused(Reason.NO_GAUGE_LIST, "no gauge list for this engine"),
                BASELINE,
                Budgets.DRAINING,
                T0);

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(step.retirement().reason()).isEqualTo(Reason.HANDED_BACK);
        assertThat(step.actions()).contains(new Action.Delete(TARGETS));
    }

    @Test
    void wholeOperationBudgetAbortsBeforeTheDrainingOne() {
        RetirementMachine.Step held = step(
                started(),
                seen(at(29), withdrawal().routed().endpointsClear(false).routerSelects(false), Map.of()));
        Retirement lateDraining =
                step(held.retirement(), seen(at(29.5), CLEAR, Map.of())).retirement();

        RetirementMachine.Step at300 = step(lateDraining, reads(at(300), new Reading.Busy(1)));

        assertThat(at300.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(at300.retirement().reason()).isEqualTo(Reason.BUDGET_EXHAUSTED);
    }

    /**
     * A restart ends whatever the old process had in flight, so waiting for the budget proves nothing: the retirement
     * binds the new container and proves the new process idle from the start, and the replica still leaves.
     */
    @Test
    void containerRestartStartsTheIdleProofOverOnTheNewProcess() {
        Retirement idleOnce = step(draining(), reads(at(3), new Reading.Idle())).retirement();
        Map<String, Observation.Present> restarted = Map.of(
                LEADER.name(), new Observation.Present(LEADER.uid(), "c-0-new"),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId()));

        RetirementMachine.Step seenRestarted =
                step(idleOnce, new Observation(at(4), restarted, CLEAR, Map.of(LEADER.name(), new Reading.Idle())));
        RetirementMachine.Step idleOnceMore = step(
                seenRestarted.retirement(),
                new Observation(at(5), restarted, CLEAR, Map.of(LEADER.name(), new Reading.Idle())));
        RetirementMachine.Step idleTwice = step(
                idleOnceMore.retirement(),
                new Observation(at(6), restarted, CLEAR, Map.of(LEADER.name(), new Reading.Idle())));

        assertThat(seenRestarted.retirement().reason()).isEqualTo(Reason.CONTAINER_RESTARTED);
        assertThat(seenRestarted.retirement().targets())
                .contains(new Member(LEADER.name(), LEADER.uid(), "c-0-new"), FOLLOWER);
        assertThat(List.of(seenRestarted, idleOnceMore)).allSatisfy(step -> {
            assertThat(step.retirement().state()).isEqualTo(RetirementState.Draining);
            assertThat(step.actions()).noneMatch(a -> a instanceof Action.Delete);
        });
        assertThat(idleTwice.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(idleTwice.actions())
                .contains(new Action.Delete(seenRestarted.retirement().targets()));
    }

    @Test
    void aFollowerRestartHoldsOnePassThenTheLeadersIdleReadsCountAfresh() {
        Map<String, Observation.Present> followerRestarted = Map.of(
                LEADER.name(), new Observation.Present(LEADER.uid(), LEADER.containerId()),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), "c-1-new"));
        Retirement idleOnce = step(draining(), reads(at(3), new Reading.Idle())).retirement();

        RetirementMachine.Step seenRestarted = step(
                idleOnce, new Observation(at(4), followerRestarted, CLEAR, Map.of(LEADER.name(), new Reading.Idle())));
        RetirementMachine.Step idleOnceMore = step(
                seenRestarted.retirement(),
                new Observation(at(5), followerRestarted, CLEAR, Map.of(LEADER.name(), new Reading.Idle())));
        RetirementMachine.Step busy = step(
                idleOnceMore.retirement(),
                new Observation(at(6), followerRestarted, CLEAR, Map.of(LEADER.name(), new Reading.Busy(1))));

        assertThat(seenRestarted.retirement().reason()).isEqualTo(Reason.CONTAINER_RESTARTED);
        assertThat(seenRestarted.retirement().message()).contains(FOLLOWER.name());
        assertThat(seenRestarted.retirement().targets())
                .contains(new Member(FOLLOWER.name(), FOLLOWER.uid(), "c-1-new"));
        // the idle read before the restart does not count with the one after it
        assertThat(List.of(seenRestarted, idleOnceMore, busy))
                .allSatisfy(step -> assertThat(step.actions()).noneMatch(a -> a instanceof Action.Delete));
        assertThat(busy.retirement().reason()).isEqualTo(Reason.BUSY);
    }

    @Test
    void memberDeletedBySomeoneElseAbortsTheOperation() {
        Map<String, Observation.Present> onlyLeader =
                Map.of(LEADER.name(), new Observation.Present(LEADER.uid(), LEADER.containerId()));

        RetirementMachine.Step step = step(draining(), new Observation(at(3), onlyLeader, CLEAR, Map.of()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(step.retirement().reason()).isEqualTo(Reason.TERMINATED_OUTSIDE);
        assertThat(step.retirement().message()).contains(FOLLOWER.name());
    }

    @Test
    void memberReplacedUnderTheSameNameAbortsTheOperation() {
        Map<String, Observation.Present> replaced = Map.of(
                LEADER.name(), new Observation.Present("uid-other", "c-9"),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId()));

        assertThat(step(draining(), new Observation(at(3), replaced, CLEAR, Map.of()))
                        .retirement()
                        .reason())
                .isEqualTo(Reason.TERMINATED_OUTSIDE);
    }

    static Stream<Arguments> standingHolds() {
        return Stream.of(
                        Reason.TAKE_OVER,
                        Reason.NO_LEADER,
                        Reason.MULTIPLE_LEADERS,
                        Reason.CONFIGURATION_DISAGREEMENT,
                        Reason.SIZE_MISMATCH)
                .map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("standingHolds")
    void replicaThatCannotBeReadIsHeldWithItsReasonAndAbortsAtTheBudget(Reason reason) {
        Retirement started = MACHINE.begin(
                        "s",
                        0,
                        "ScaleDown",
                        TARGETS,
                        new Classification.Held(reason, "cannot read " + reason),
                        BASELINE,
                        Budgets.DRAINING,
                        T0)
                .retirement();
        Retirement draining = step(started, seen(at(1), CLEAR, Map.of())).retirement();

        RetirementMachine.Step held = step(draining, reads(at(2), new Reading.Idle()));
        RetirementMachine.Step heldAgain = step(held.retirement(), reads(at(3), new Reading.Idle()));
        RetirementMachine.Step end = step(heldAgain.retirement(), reads(at(241), new Reading.Idle()));

        assertThat(held.retirement().reason()).isEqualTo(reason);
        assertThat(heldAgain.actions()).noneMatch(a -> a instanceof Action.Delete);
        assertThat(end.retirement().state()).isEqualTo(RetirementState.Aborted);
        assertThat(end.retirement().reason()).isEqualTo(reason);
    }

    @Test
    void deletingSettlesAndCompletesWhenTheMembersAreGone() {
        Retirement deleting = step(
                        step(draining(), reads(at(3), new Reading.Idle())).retirement(),
                        reads(at(4), new Reading.Idle()))
                .retirement();
        Retirement settling = step(deleting, seen(at(5), CLEAR, Map.of())).retirement();
        Map<String, Observation.Present> still =
                Map.of(LEADER.name(), new Observation.Present(LEADER.uid(), LEADER.containerId()));

        RetirementMachine.Step slow = step(settling, new Observation(at(35), still, CLEAR, Map.of()));
        RetirementMachine.Step done = step(slow.retirement(), new Observation(at(40), Map.of(), CLEAR, Map.of()));

        assertThat(settling.state()).isEqualTo(RetirementState.Settling);
        assertThat(slow.retirement().state()).isEqualTo(RetirementState.Settling);
        assertThat(slow.retirement().reason()).isEqualTo(Reason.MEMBERS_GONE_SLOWLY);
        assertThat(slow.actions()).noneMatch(a -> a instanceof Action.Restore);
        assertThat(done.retirement().state()).isEqualTo(RetirementState.Completed);
    }

    @Test
    void pastTheDeletionEveryReservedMemberStillThereUndeletedIsDeletedAgainOnEachPass() {
        Retirement deleting = step(
                        step(draining(), reads(at(3), new Reading.Idle())).retirement(),
                        reads(at(4), new Reading.Idle()))
                .retirement();
        Map<String, Observation.Present> untouched = Map.of(
                LEADER.name(), new Observation.Present(LEADER.uid(), LEADER.containerId()),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId()));
        Map<String, Observation.Present> followerTerminating = Map.of(
                LEADER.name(), new Observation.Present(LEADER.uid(), LEADER.containerId()),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId(), true));
        Map<String, Observation.Present> leaderReplaced = Map.of(
                LEADER.name(), new Observation.Present("uid-new", "c-9"),
                FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId(), true));

        RetirementMachine.Step lost = step(deleting, new Observation(at(5), untouched, CLEAR, Map.of()));
        RetirementMachine.Step lostAgain = step(lost.retirement(), new Observation(at(6), untouched, CLEAR, Map.of()));
        RetirementMachine.Step half =
                step(lostAgain.retirement(), new Observation(at(7), followerTerminating, CLEAR, Map.of()));
        RetirementMachine.Step replaced =
                step(half.retirement(), new Observation(at(8), leaderReplaced, CLEAR, Map.of()));

        assertThat(lost.retirement().state()).isEqualTo(RetirementState.Settling);
        assertThat(lost.actions()).contains(new Action.Delete(TARGETS));
        assertThat(lostAgain.retirement().state()).isEqualTo(RetirementState.Settling);
        assertThat(lostAgain.actions()).contains(new Action.Delete(TARGETS));
        assertThat(half.actions()).contains(new Action.Delete(List.of(LEADER)));
        assertThat(replaced.actions())
                .as("a Pod recreated under the name is not the reserved one")
                .noneMatch(a -> a instanceof Action.Delete);
    }

    @Test
    void nothingHappensAfterAnAbort() {
        Retirement aborted = step(
                        started(),
                        seen(at(30), withdrawal().routed().endpointsClear(false).routerSelects(false), Map.of()))
                .retirement();

        RetirementMachine.Step after = step(aborted, reads(at(31), new Reading.Idle()));

        assertThat(after.retirement()).isEqualTo(aborted);
        assertThat(after.actions()).isEmpty();
    }

    @Test
    void aPassWhoseReadHasNotLandedKeepsTheLastVerdictSoABusyHoldIsAnnouncedOnce() {
        Retirement current = draining();
        List<Action.Announce> announced = new java.util.ArrayList<>();
        for (int pass = 0; pass < 60; pass++) {
            Observation seen =
                    pass % 2 == 0 ? reads(at(3 + pass), new Reading.Busy(2)) : seen(at(3 + pass), CLEAR, Map.of());
            RetirementMachine.Step step = step(current, seen);
            step.actions().stream()
                    .filter(a -> a instanceof Action.Announce)
                    .map(a -> (Action.Announce) a)
                    .forEach(announced::add);
            current = step.retirement();
            assertThat(current.reason()).isEqualTo(Reason.BUSY);
            assertThat(current.message()).contains("has 2 requests in flight");
        }

        assertThat(announced).extracting(Action.Announce::reason).containsExactly(Reason.BUSY);
    }

    @Test
    void aMemberNeverReadYetIsAwaitingReads() {
        RetirementMachine.Step step = step(draining(), seen(at(3), CLEAR, Map.of()));

        assertThat(step.retirement().reason()).isEqualTo(Reason.AWAITING_READS);
    }

    /** Without a router: the Service is the only path, so the withdrawal is the label and the endpoints. */
    static final Observation.Withdrawal UNROUTED_CLEAR =
            withdrawal().endpointsClear(true).get();

    static final ConnectionRead.Peers NO_PEERS = new ConnectionRead.Peers.Connected(0, List.of());

    static Observation unrouted(
            Instant at, Observation.Withdrawal withdrawal, Reading leader, ConnectionRead.Peers peers) {
        Observation base = seen(at, withdrawal, Map.of(LEADER.name(), leader));
        return new Observation(at, base.members(), withdrawal, base.reads(), Map.of(LEADER.name(), peers), Map.of());
    }

    static Observation unrouted(Instant at, SeenWithdrawal withdrawal, Reading leader, ConnectionRead.Peers peers) {
        return unrouted(at, withdrawal.get(), leader, peers);
    }

    /** A retirement without a router, its endpoints seen clear at 1 s. */
    static Retirement drainingUnrouted() {
        Retirement started = MACHINE.begin(
                        "server",
                        2,
                        "ScaleDown",
                        TARGETS,
                        new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                        Optional.of(Map.of()),
                        Budgets.DRAINING,
                        T0)
                .retirement();
        return step(started, seen(at(1), UNROUTED_CLEAR, Map.of())).retirement();
    }

    @Test
    void withoutARouterClearEndpointsConfirmTheWithdrawal() {
        RetirementMachine.Step step = step(drainingUnroutedStart(), seen(at(1), UNROUTED_CLEAR, Map.of()));

        assertThat(step.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(step.retirement().reason()).isEqualTo(Reason.WITHDRAWN);
        assertThat(step.actions()).noneMatch(a -> a instanceof Action.Unroute);
    }

    @Test
    void withoutARouterNoReadStartsWithinTheMarginSoEveryReadThatCountsBeganAfterIt() {
        Retirement draining = drainingUnrouted();
        RetirementMachine.Step within = step(draining, seen(at(5.9), UNROUTED_CLEAR, Map.of()));
        RetirementMachine.Step after = step(within.retirement(), seen(at(6), UNROUTED_CLEAR, Map.of()));
        SeenWithdrawal listedAgain = withdrawal().endpointsClear(false);
        RetirementMachine.Step lost = step(after.retirement(), seen(at(7), listedAgain, Map.of()));

        assertThat(step(drainingUnroutedStart(), seen(at(1), UNROUTED_CLEAR, Map.of()))
                        .actions())
                .noneMatch(a -> a instanceof Action.ReadMembers);
        assertThat(within.actions()).noneMatch(a -> a instanceof Action.ReadMembers);
        assertThat(after.actions()).contains(new Action.ReadMembers(List.of(LEADER.name())));
        assertThat(after.retirement().message()).isEqualTo("waiting for reads of " + LEADER.name());
        assertThat(lost.actions()).noneMatch(a -> a instanceof Action.ReadMembers);
    }

    private static Retirement drainingUnroutedStart() {
        return MACHINE.begin(
                        "server",
                        2,
                        "ScaleDown",
                        TARGETS,
                        new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                        Optional.of(Map.of()),
                        Budgets.DRAINING,
                        T0)
                .retirement();
    }

    @Test
    void withoutARouterAnIdleReplicaWithNoClientIsDeletedAfterTheMarginAndTwoSpacedReads() {
        Retirement tooEarly = step(drainingUnrouted(), unrouted(at(5.9), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        assertThat(tooEarly.reason()).isEqualTo(Reason.AWAITING_READS);
        assertThat(tooEarly.message()).contains("a node may still send a new connection");

        Retirement once = step(tooEarly, unrouted(at(6), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        assertThat(once.state()).isEqualTo(RetirementState.Draining);
        assertThat(once.reads().get(LEADER.name()).consecutiveIdle()).isEqualTo(1);

        RetirementMachine.Step twice = step(once, unrouted(at(7), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS));
        assertThat(twice.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(twice.retirement().message()).contains("no client connected");
        assertThat(twice.actions()).contains(new Action.Delete(TARGETS));
    }

    /**
     * One pass without a router, by named fields, after a first idle read: the leader's gauges and connection table
     * (none: the table is missing from the pass), and the hold it must make, with what its message must say.
     */
    record UnroutedHold(String title, Reading gauges, ConnectionRead.Peers peers, Reason reason, List<String> said) {
        static UnroutedHold pass(String title) {
            return new UnroutedHold(title, new Reading.Idle(), NO_PEERS, null, List.of());
        }

        UnroutedHold gauges(Reading read) {
            return new UnroutedHold(title, read, peers, reason, said);
        }

        UnroutedHold peers(ConnectionRead.Peers table) {
            return new UnroutedHold(title, gauges, table, reason, said);
        }

        UnroutedHold noTable() {
            return peers(null);
        }

        UnroutedHold holds(Reason why, String... saying) {
            return new UnroutedHold(title, gauges, peers, why, List.of(saying));
        }

        @Override
        public String toString() {
            return title;
        }
    }

    static Stream<UnroutedHold> unroutedPassesThatHold() {
        List<String> seven = List.of(
                "10.0.0.1:40001",
                "10.0.0.2:40002",
                "10.0.0.3:40003",
                "10.0.0.4:40004",
                "10.0.0.5:40005",
                "10.0.0.6:40006",
                "[fd00::7]:40007");
        return Stream.of(
                UnroutedHold.pass("one client connected")
                        .peers(new ConnectionRead.Peers.Connected(1, List.of("10.0.0.9:51234")))
                        .holds(Reason.OPEN_CONNECTIONS, "1 client is still connected: 10.0.0.9:51234"),
                UnroutedHold.pass("seven clients, five named")
                        .peers(new ConnectionRead.Peers.Connected(7, seven))
                        .holds(Reason.OPEN_CONNECTIONS, "7 clients are still connected", "10.0.0.5:40005, …"),
                UnroutedHold.pass("table unreadable")
                        .peers(new ConnectionRead.Peers.Unknown("the connection read exited with code 7"))
                        .holds(Reason.READ_FAILED, "exited with code 7"),
                UnroutedHold.pass("table missing from the pass")
                        .noTable()
                        .holds(Reason.READ_FAILED, "not read with its gauges"),
                UnroutedHold.pass("busy, no client")
                        .gauges(new Reading.Busy(2))
                        .holds(Reason.BUSY, "2 requests in flight"),
                UnroutedHold.pass("busy, table unreadable")
                        .gauges(new Reading.Busy(1))
                        .peers(new ConnectionRead.Peers.Unknown("cut"))
                        .holds(Reason.BUSY, "1 requests in flight"),
                UnroutedHold.pass("gauges missing")
                        .gauges(new Reading.Partial(List.of("vllm:num_requests_waiting")))
                        .holds(Reason.PARTIAL_ENVELOPE, "vllm:num_requests_waiting"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unroutedPassesThatHold")
    void withoutARouterAPassThatIsNotIdleWithNoClientHoldsAndStartsTheRunOver(UnroutedHold row) {
        Retirement once = step(drainingUnrouted(), unrouted(at(6), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        Map<String, Reading> reads = Map.of(LEADER.name(), row.gauges());
        Map<String, ConnectionRead.Peers> tables = row.peers() == null ? Map.of() : Map.of(LEADER.name(), row.peers());
        Observation base = seen(at(7), UNROUTED_CLEAR, reads);

        RetirementMachine.Step held =
                step(once, new Observation(at(7), base.members(), UNROUTED_CLEAR, reads, tables, Map.of()));

        assertThat(held.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(held.retirement().reason()).isEqualTo(row.reason());
        assertThat(held.retirement().message()).contains(row.said());
        assertThat(held.retirement().message()).doesNotContain("10.0.0.6");
        assertThat(held.retirement().reads().get(LEADER.name()).consecutiveIdle())
                .isZero();
        assertThat(held.actions()).noneMatch(a -> a instanceof Action.Delete);
        assertThat(held.actions())
                .contains(new Action.Announce(
                        !TOLD_AS_NORMAL.contains(row.reason().wire()),
                        row.reason(),
                        held.retirement().message()));
    }

    @Test
    void withoutARouterAReplicaHeldByAClientIsDeletedOnceTheClientIsGone() {
        Retirement held = step(
                        drainingUnrouted(),
                        unrouted(
                                at(6),
                                UNROUTED_CLEAR,
                                new Reading.Idle(),
                                new ConnectionRead.Peers.Connected(1, List.of("10.0.0.9:51234"))))
                .retirement();
        Retirement once = step(held, unrouted(at(7), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        RetirementMachine.Step twice = step(once, unrouted(at(8), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS));

        assertThat(held.reason()).isEqualTo(Reason.OPEN_CONNECTIONS);
        assertThat(twice.retirement().state()).isEqualTo(RetirementState.Deleting);
    }

    /**
     * One unrouted pass, by named fields: the leader's gauges, its connection table, and its request counters' sum (null:
     * unreadable). {@code Pass.idleAt(t)} is idle gauges, no peer connected and the counters at 40; withers say what
     * differs.
     */
    record Pass(double at, Reading gauges, ConnectionRead.Peers peers, Double requests) {
        static Pass idleAt(double at) {
            return new Pass(at, new Reading.Idle(), NO_PEERS, 40.0);
        }

        Pass gauges(Reading read) {
            return new Pass(at, read, peers, requests);
        }

        Pass peers(ConnectionRead.Peers table) {
            return new Pass(at, gauges, table, requests);
        }

        Pass requests(Double sum) {
            return new Pass(at, gauges, peers, sum);
        }

        Pass countersUnread() {
            return requests(null);
        }

        Observation observed() {
            Observation base = seen(RetirementMachineTest.at(at), UNROUTED_CLEAR, Map.of(LEADER.name(), gauges));
            return new Observation(
                    base.now(),
                    base.members(),
                    UNROUTED_CLEAR,
                    base.reads(),
                    Map.of(LEADER.name(), peers),
                    requests == null ? Map.of() : Map.of(LEADER.name(), requests));
        }
    }

    static final ConnectionRead.Peers SCRAPER = new ConnectionRead.Peers.Connected(1, List.of("10.0.0.50:39000"));

    /** A pass a second from 6 s (the first after the margin) to {@code last}, each made by {@code pass}. */
    static List<Pass> everySecond(int last, IntFunction<Pass> pass) {
        return IntStream.rangeClosed(6, last).mapToObj(pass).toList();
    }

    /** Each pass in turn, from a retirement without a router whose endpoints were seen clear at 1 s; every step's result. */
    static List<RetirementMachine.Step> passes(List<Pass> passes) {
        List<RetirementMachine.Step> steps = new ArrayList<>();
        Retirement current = drainingUnrouted();
        for (Pass pass : passes) {
            RetirementMachine.Step next = step(current, pass.observed());
            steps.add(next);
            current = next.retirement();
        }
        return steps;
    }

    /** When the first pass that deletes the replica ran, in seconds from the start; empty when none did. */
    static Optional<Double> deletedAt(List<Pass> passes) {
        List<RetirementMachine.Step> steps = passes(passes);
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).actions().stream().anyMatch(a -> a instanceof Action.Delete)) {
                return Optional.of(passes.get(i).at());
            }
        }
        return Optional.empty();
    }

    record QuietCase(String name, List<Pass> passes, Optional<Double> deletedAt) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<QuietCase> quietPeerCases() {
        ConnectionRead.Peers probe = new ConnectionRead.Peers.Connected(1, List.of("10.0.0.1:41000"));
        return Stream.of(
                new QuietCase(
                        "a scraper's kept connection, no request: taken for a bystander 10 s after the first read",
                        everySecond(20, t -> Pass.idleAt(t).peers(SCRAPER)),
                        Optional.of(17.0)),
                new QuietCase(
                        "probes on new connections, a pass with none between: the quiet spell runs on",
                        everySecond(20, t -> Pass.idleAt(t).peers(t % 2 == 0 ? probe : NO_PEERS)),
                        Optional.of(16.0)),
                new QuietCase(
                        "a client's short request between two reads moves the counters: the wait starts over",
                        everySecond(30, t -> Pass.idleAt(t).peers(SCRAPER).requests(t < 12 ? 40.0 : 41.0)),
                        Optional.of(23.0)),
                new QuietCase(
                        "a request in flight: busy, and the wait starts over when it ends",
                        everySecond(
                                30,
                                t -> Pass.idleAt(t)
                                        .gauges(t == 12 ? new Reading.Busy(1) : new Reading.Idle())
                                        .peers(SCRAPER)
                                        .requests(t <= 12 ? 40.0 : 41.0)),
                        Optional.of(24.0)),
                new QuietCase(
                        "counters that fall (an engine counting from zero again) moved too",
                        everySecond(30, t -> Pass.idleAt(t).peers(SCRAPER).requests(t < 12 ? 40.0 : 3.0)),
                        Optional.of(23.0)),
                new QuietCase(
                        "counters unreadable: peers are never taken for bystanders",
                        everySecond(60, t -> Pass.idleAt(t).peers(SCRAPER).countersUnread()),
                        Optional.empty()),
                new QuietCase(
                        "counters unreadable at one pass: the spell starts over after it",
                        everySecond(30, t -> Pass.idleAt(t).peers(SCRAPER).requests(t == 12 ? null : 40.0)),
                        Optional.of(24.0)),
                new QuietCase(
                        "a table that cannot be read is no pass at all, quiet or not",
                        everySecond(60, t -> Pass.idleAt(t).peers(new ConnectionRead.Peers.Unknown("exit 7"))),
                        Optional.empty()),
                new QuietCase(
                        "no peers: deleted after two reads, as before",
                        everySecond(20, t -> Pass.idleAt(t)),
                        Optional.of(7.0)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("quietPeerCases")
    void withoutARouterPeersAreTakenForBystandersOnlyOnceNoRequestReachedTheMemberForTheWholeWait(QuietCase c) {
        assertThat(deletedAt(c.passes())).isEqualTo(c.deletedAt());
    }

    @Test
    void theHoldNamesThePeersAndHowLongTheMemberHasBeenQuietAndTheDeletionSaysWhyTheyWereDiscounted() {
        List<RetirementMachine.Step> steps =
                passes(everySecond(17, t -> Pass.idleAt(t).peers(SCRAPER)));
        Retirement waiting = steps.get(steps.size() - 3).retirement();
        RetirementMachine.Step deleting = steps.get(steps.size() - 1);

        assertThat(waiting.reason()).isEqualTo(Reason.OPEN_CONNECTIONS);
        assertThat(waiting.message())
                .contains(
                        "1 client is still connected: 10.0.0.50:39000", "no request has reached it for 9 of the 10 s");
        assertThat(deleting.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(deleting.actions())
                .contains(new Action.Announce(
                        false, Reason.PROVEN_IDLE, deleting.retirement().message()));
        assertThat(deleting.retirement().message())
                .contains("1 peer still connected to " + LEADER.name()
                        + " (10.0.0.50:39000) taken for bystanders: no request reached it in 11 s");
    }

    @Test
    void aClientsUnreadableCountersAreSaidInTheHold() {
        Retirement held = passes(List.of(Pass.idleAt(6).peers(SCRAPER).countersUnread()))
                .get(0)
                .retirement();

        assertThat(held.message())
                .contains("its request counters could not be read, so they cannot be told from bystanders");
    }

    @Test
    void theQuietSpellSurvivesAnOperatorRestartAndAnEditedOneOnlyLengthensTheWait() {
        List<RetirementMachine.Step> steps =
                passes(everySecond(12, t -> Pass.idleAt(t).peers(SCRAPER)));
        Retirement held = steps.get(steps.size() - 1).retirement();
        RetirementStatus status = RetirementRecords.toStatus(new RetirementRecord(held, null, Optional.empty(), 1));
        Retirement readBack = RetirementRecords.fromStatus(status).orElseThrow().retirement();
        RetirementStatus.MemberRead edited = new RetirementStatus.MemberRead(
                LEADER.name(),
                "OpenConnections",
                0.0,
                0,
                at(12).toString(),
                40.0,
                T0.minusSeconds(3600).toString());
        RetirementStatus editedStatus = EditedStatus.edited(status, "reads", List.of(edited));
        Retirement readEdited =
                RetirementRecords.fromStatus(editedStatus).orElseThrow().retirement();

        assertThat(readBack.reads().get(LEADER.name()).quiet()).contains(new MemberReads.Quiet(40.0, at(6)));
        assertThat(step(
                                step(readBack, Pass.idleAt(16).peers(SCRAPER).observed())
                                        .retirement(),
                                Pass.idleAt(17).peers(SCRAPER).observed())
                        .actions())
                .anyMatch(a -> a instanceof Action.Delete);
        assertThat(readEdited.reads().get(LEADER.name()).quiet()).isEmpty();
        assertThat(step(readEdited, Pass.idleAt(16).peers(SCRAPER).observed())
                        .retirement()
                        .reason())
                .isEqualTo(Reason.OPEN_CONNECTIONS);
    }

    @Test
    void withoutARouterAWithdrawalLostAndSeenBackWaitsTheMarginAgainFromWhenItIsSeenClear() {
        Retirement once = step(drainingUnrouted(), unrouted(at(6), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        SeenWithdrawal listedAgain = withdrawal().endpointsClear(false);
        Retirement lost = step(once, unrouted(at(7), listedAgain, new Reading.Idle(), NO_PEERS))
                .retirement();
        Retirement stillLost = step(lost, unrouted(at(20), listedAgain, new Reading.Idle(), NO_PEERS))
                .retirement();
        Retirement seenBack = step(stillLost, unrouted(at(30), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        Retirement withinMargin = step(seenBack, unrouted(at(34.9), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        Retirement first = step(withinMargin, unrouted(at(35), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();
        RetirementMachine.Step second = step(first, unrouted(at(36), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS));

        assertThat(lost.reason()).isEqualTo(Reason.WITHDRAWAL_LOST);
        assertThat(List.of(seenBack, withinMargin)).allSatisfy(r -> {
            assertThat(r.state()).isEqualTo(RetirementState.Draining);
            assertThat(r.reason()).isEqualTo(Reason.AWAITING_READS);
            assertThat(r.reads().get(LEADER.name()).consecutiveIdle()).isZero();
        });
        assertThat(first.reads().get(LEADER.name()).consecutiveIdle()).isEqualTo(1);
        assertThat(second.retirement().state()).isEqualTo(RetirementState.Deleting);
    }

    @Test
    void withoutARouterThePropagationMarginIsTheSettingGiven() {
        Retirement started = drainingUnroutedStart();
        Retirement draining = MACHINE.step(
                        started, seen(at(1), UNROUTED_CLEAR, Map.of()), Duration.ofSeconds(20), NO_LAG, QUIET_PEERS)
                .retirement();
        Retirement early = MACHINE.step(
                        draining,
                        unrouted(at(20.9), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS),
                        Duration.ofSeconds(20),
                        NO_LAG,
                        QUIET_PEERS)
                .retirement();
        Retirement counted = MACHINE.step(
                        early,
                        unrouted(at(21), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS),
                        Duration.ofSeconds(20),
                        NO_LAG,
                        QUIET_PEERS)
                .retirement();

        assertThat(early.reads().get(LEADER.name()).consecutiveIdle()).isZero();
        assertThat(counted.reads().get(LEADER.name()).consecutiveIdle()).isEqualTo(1);
    }

    @Test
    void withoutARouterTheRecordSurvivesARestartMidMargin() {
        Retirement draining = drainingUnrouted();
        Retirement readBack = RetirementRecords.fromStatus(
                        RetirementRecords.toStatus(new RetirementRecord(draining, null, Optional.empty(), 1)))
                .orElseThrow()
                .retirement();
        Retirement early = step(readBack, unrouted(at(5.9), UNROUTED_CLEAR, new Reading.Idle(), NO_PEERS))
                .retirement();

        assertThat(early.reads().get(LEADER.name()).consecutiveIdle()).isZero();
        assertThat(early.reason()).isEqualTo(Reason.AWAITING_READS);
    }

    /**
     * A request the router sent just before it let the replica go may still be templated or tokenized in the engine's
     * front end, where no gauge counts it: reads count only once the margin since the withdrawal was confirmed is over.
     */
    @Test
    void withARouterNoReadCountsUntilARequestSentJustBeforeTheWithdrawalHadTimeToReachTheGauges() {
        RetirementMachine.Step confirmed = lagging(started(), seen(at(1), CLEAR, Map.of()));
        RetirementMachine.Step within = lagging(confirmed.retirement(), reads(at(5.9), new Reading.Idle()));
        RetirementMachine.Step first = lagging(within.retirement(), reads(at(6), new Reading.Idle()));
        RetirementMachine.Step second = lagging(first.retirement(), reads(at(7), new Reading.Idle()));

        assertThat(confirmed.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(confirmed.retirement().reason()).isEqualTo(Reason.WITHDRAWN);
        assertThat(confirmed.actions()).noneMatch(a -> a instanceof Action.ReadMembers);
        assertThat(within.retirement().reason()).isEqualTo(Reason.AWAITING_READS);
        assertThat(within.retirement().message()).contains("front end").contains(at(6).toString());
        assertThat(within.retirement().reads().get(LEADER.name()).consecutiveIdle())
                .isZero();
        assertThat(within.actions()).noneMatch(a -> a instanceof Action.ReadMembers || a instanceof Action.Delete);
        assertThat(first.actions())
                .contains(new Action.ReadMembers(List.of(LEADER.name())))
                .noneMatch(a -> a instanceof Action.Delete);
        assertThat(first.retirement().reads().get(LEADER.name()).consecutiveIdle())
                .isEqualTo(1);
        assertThat(second.retirement().state()).isEqualTo(RetirementState.Deleting);
        assertThat(second.actions()).contains(new Action.Delete(TARGETS));
    }

    /** Counts that moved after the withdrawal push the margin on: it runs from the pass that found them still. */
    @Test
    void withARouterTheMarginRunsFromThePassThatFoundTheDispatchCountsStill() {
        RetirementMachine.Step moved = lagging(started(), seen(at(1), dispatched(8.0), Map.of()));
        RetirementMachine.Step still = lagging(moved.retirement(), seen(at(3), dispatched(8.0), Map.of()));
        RetirementMachine.Step early =
                lagging(still.retirement(), seen(at(7.9), dispatched(8.0), Map.of(LEADER.name(), new Reading.Idle())));
        RetirementMachine.Step counted =
                lagging(early.retirement(), seen(at(8), dispatched(8.0), Map.of(LEADER.name(), new Reading.Idle())));

        assertThat(moved.retirement().state()).isEqualTo(RetirementState.Withdrawing);
        assertThat(moved.retirement().reason()).isEqualTo(Reason.RECENT_DISPATCH);
        assertThat(still.retirement().state()).isEqualTo(RetirementState.Draining);
        assertThat(early.retirement().reads().get(LEADER.name()).consecutiveIdle())
                .isZero();
        assertThat(counted.retirement().reads().get(LEADER.name()).consecutiveIdle())
                .isEqualTo(1);
    }

    @Test
    void withARouterAWithdrawalLostAndSeenBackWaitsTheMarginAgain() {
        Retirement draining = lagging(started(), seen(at(1), CLEAR, Map.of())).retirement();
        Retirement once = lagging(draining, reads(at(6), new Reading.Idle())).retirement();
        SeenWithdrawal selectedAgain =
                withdrawal().routed().endpointsClear(true).routerSelects(true).dispatches(LEADER, 7);
        RetirementMachine.Step lost =
                lagging(once, seen(at(7), selectedAgain, Map.of(LEADER.name(), new Reading.Idle())));
        Retirement seenBack =
                lagging(lost.retirement(), reads(at(10), new Reading.Idle())).retirement();
        Retirement withinMargin =
                lagging(seenBack, reads(at(14.9), new Reading.Idle())).retirement();
        Retirement first =
                lagging(withinMargin, reads(at(15), new Reading.Idle())).retirement();
        RetirementMachine.Step second = lagging(first, reads(at(16), new Reading.Idle()));

        assertThat(once.reads().get(LEADER.name()).consecutiveIdle()).isEqualTo(1);
        assertThat(lost.retirement().reason()).isEqualTo(Reason.WITHDRAWAL_LOST);
        assertThat(lost.actions()).noneMatch(a -> a instanceof Action.ReadMembers || a instanceof Action.Delete);
        assertThat(List.of(seenBack, withinMargin)).allSatisfy(r -> {
            assertThat(r.reason()).isEqualTo(Reason.AWAITING_READS);
            assertThat(r.reads().get(LEADER.name()).consecutiveIdle()).isZero();
        });
        assertThat(first.reads().get(LEADER.name()).consecutiveIdle()).isEqualTo(1);
        assertThat(second.retirement().state()).isEqualTo(RetirementState.Deleting);
    }
}
