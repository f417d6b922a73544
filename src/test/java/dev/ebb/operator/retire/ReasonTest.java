package dev.ebb.operator.retire;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ReasonTest {
    @Test
    void everyReasonKeepsTheNameStatusAndEventsCarry() {
        Map<Reason, String> carried = Map.ofEntries(
                entry(Reason.STARTED, "RetirementStarted"),
                entry(Reason.STILL_LABELLED_SERVING, "StillLabelledServing"),
                entry(Reason.ENDPOINTS_UNKNOWN, "EndpointsUnknown"),
                entry(Reason.ENDPOINTS_STILL_LIST, "EndpointsStillList"),
                entry(Reason.ROUTER_UNAVAILABLE, "RouterUnavailable"),
                entry(Reason.ROUTER_STILL_SELECTS, "RouterStillSelects"),
                entry(Reason.RECENT_DISPATCH, "RecentDispatch"),
                entry(Reason.WITHDRAWN, "Withdrawn"),
                entry(Reason.WITHDRAWAL_LOST, "WithdrawalLost"),
                entry(Reason.BUSY, "Busy"),
                entry(Reason.PARTIAL_ENVELOPE, "PartialEnvelope"),
                entry(Reason.READ_FAILED, "ReadFailed"),
                entry(Reason.OPEN_CONNECTIONS, "OpenConnections"),
                entry(Reason.CONTAINER_RESTARTED, "ContainerRestarted"),
                entry(Reason.AWAITING_READS, "AwaitingReads"),
                entry(Reason.PROVEN_IDLE, "ProvenIdle"),
                entry(Reason.LEADER_GONE, "LeaderGone"),
                entry(Reason.MEMBERS_GONE_SLOWLY, "MembersGoneSlowly"),
                entry(Reason.COMPLETED, "Completed"),
                entry(Reason.TERMINATED_OUTSIDE, "TerminatedOutsideOperator"),
                entry(Reason.BUDGET_EXHAUSTED, "BudgetExhausted"),
                entry(Reason.NO_LONGER_WANTED, "NoLongerWanted"),
                entry(Reason.HANDED_BACK, "HandedBackToDrain"),
                entry(Reason.DISAGGREGATED, "Disaggregated"),
                entry(Reason.NO_GAUGE_LIST, "NoGaugeList"),
                entry(Reason.TAKE_OVER, "TakeOver"),
                entry(Reason.NO_LEADER, "NoLeader"),
                entry(Reason.MULTIPLE_LEADERS, "MultipleLeaders"),
                entry(Reason.CONFIGURATION_DISAGREEMENT, "ConfigurationDisagreement"),
                entry(Reason.SIZE_MISMATCH, "SizeMismatch"));

        assertThat(Arrays.stream(Reason.values()).collect(Collectors.toMap(Function.identity(), Reason::wire)))
                .isEqualTo(carried);
        assertThat(Reason.values()).allSatisfy(r -> {
            assertThat(r).hasToString(r.wire());
            assertThat(Reason.fromWire(r.wire())).contains(r);
        });
    }

    @Test
    void onlyTheProtocolAtWorkIsAWaitAndOnlyWhatNeverRetiresThisWayIsARefusal() {
        assertThat(Arrays.stream(Reason.values()).filter(Reason::waits))
                .containsExactlyInAnyOrder(
                        Reason.AWAITING_READS,
                        Reason.BUSY,
                        Reason.RECENT_DISPATCH,
                        Reason.ENDPOINTS_STILL_LIST,
                        Reason.ROUTER_STILL_SELECTS,
                        Reason.OPEN_CONNECTIONS);
        assertThat(Arrays.stream(Reason.values()).filter(Reason::refusal))
                .containsExactlyInAnyOrder(Reason.DISAGGREGATED, Reason.NO_GAUGE_LIST);
    }

    @Test
    void aNameNoReasonCarriesIsNone() {
        assertThat(Reason.fromWire("Exploding")).isEmpty();
        assertThat(Reason.fromWire("busy")).as("names are matched exactly").isEmpty();
        assertThat(Reason.fromWire("BUSY"))
                .as("the constant's name is not the wire name")
                .isEmpty();
        assertThat(Reason.fromWire("")).isEmpty();
        assertThat(Reason.fromWire(null)).isEmpty();
    }
}
