package dev.ebb.operator.retire;

import java.util.Set;

/** The CamelCase reasons a retirement reports in status and Events. */
public final class Reasons {
    public static final String STARTED = "RetirementStarted";
    public static final String STILL_LABELLED_SERVING = "StillLabelledServing";
    public static final String ENDPOINTS_UNKNOWN = "EndpointsUnknown";
    public static final String ENDPOINTS_STILL_LIST = "EndpointsStillList";
    public static final String ROUTER_UNAVAILABLE = "RouterUnavailable";
    public static final String ROUTER_STILL_SELECTS = "RouterStillSelects";
    public static final String RECENT_DISPATCH = "RecentDispatch";
    public static final String WITHDRAWN = "Withdrawn";
    /** A draining replica found back on a path to new work: its idle reads start over. */
    public static final String WITHDRAWAL_LOST = "WithdrawalLost";

    public static final String BUSY = "Busy";
    public static final String PARTIAL_ENVELOPE = "PartialEnvelope";
    public static final String READ_FAILED = "ReadFailed";
    /** Without a router: clients are still connected to the member, through the Service or a connection kept open. */
    public static final String OPEN_CONNECTIONS = "OpenConnections";

    public static final String CONTAINER_RESTARTED = "ContainerRestarted";
    public static final String AWAITING_READS = "AwaitingReads";
    public static final String PROVEN_IDLE = "ProvenIdle";
    /** Only followers of the replica are left: none of them takes requests, so nothing of it can be in flight. */
    public static final String LEADER_GONE = "LeaderGone";

    public static final String MEMBERS_GONE_SLOWLY = "MembersGoneSlowly";
    public static final String COMPLETED = "Completed";
    public static final String TERMINATED_OUTSIDE = "TerminatedOutsideOperator";
    public static final String BUDGET_EXHAUSTED = "BudgetExhausted";
    public static final String NO_LONGER_WANTED = "NoLongerWanted";
    /** A move off a node going away that could not be proven idle in time, deleted with its grace as the drain would. */
    public static final String HANDED_BACK = "HandedBackToDrain";
    /** Refusals: the replica is never deleted through the protocol. */
    public static final String DISAGGREGATED = "Disaggregated";

    public static final String NO_GAUGE_LIST = "NoGaugeList";
    /** Holds that come from how the replica was deployed: nothing can be read from it. */
    public static final String TAKE_OVER = "TakeOver";

    public static final String NO_LEADER = "NoLeader";
    public static final String MULTIPLE_LEADERS = "MultipleLeaders";
    public static final String CONFIGURATION_DISAGREEMENT = "ConfigurationDisagreement";
    public static final String SIZE_MISMATCH = "SizeMismatch";

    /** Whether a reason is a refusal: such an abort is never retried by itself, only when the user asks. */
    public static boolean refusal(String reason) {
        return DISAGGREGATED.equals(reason) || NO_GAUGE_LIST.equals(reason);
    }

    private Reasons() {}

    /**
     * Holds that are the protocol at work, told as Normal Events: a withdrawal still spreading to the endpoints or the
     * router, a read still to come, an engine still generating, a client still connected. Every other hold points at
     * something to look at and is told as a Warning.
     */
    public static final Set<String> WAITS =
            Set.of(AWAITING_READS, BUSY, RECENT_DISPATCH, ENDPOINTS_STILL_LIST, ROUTER_STILL_SELECTS, OPEN_CONNECTIONS);
}
