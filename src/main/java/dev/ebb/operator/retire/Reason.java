package dev.ebb.operator.retire;

import java.util.Arrays;
import java.util.Optional;

/**
 * Why a retirement stands where it is. Status (status.retirements[].reason, holdReason, abortedRetirements[].reason)
 * and Events carry each by its CamelCase wire name, which never changes: people and scripts match on it.
 */
public enum Reason {
    STARTED("RetirementStarted"),
    STILL_LABELLED_SERVING("StillLabelledServing"),
    ENDPOINTS_UNKNOWN("EndpointsUnknown"),
    ENDPOINTS_STILL_LIST("EndpointsStillList", Kind.WAIT),
    ROUTER_UNAVAILABLE("RouterUnavailable"),
    ROUTER_STILL_SELECTS("RouterStillSelects", Kind.WAIT),
    RECENT_DISPATCH("RecentDispatch", Kind.WAIT),
    WITHDRAWN("Withdrawn"),
    /** A draining replica found back on a path to new work: its idle reads start over. */
    WITHDRAWAL_LOST("WithdrawalLost"),

    BUSY("Busy", Kind.WAIT),
    PARTIAL_ENVELOPE("PartialEnvelope"),
    READ_FAILED("ReadFailed"),
    /** Without a router: clients are still connected to the member, through the Service or a connection kept open. */
    OPEN_CONNECTIONS("OpenConnections", Kind.WAIT),

    CONTAINER_RESTARTED("ContainerRestarted"),
    AWAITING_READS("AwaitingReads", Kind.WAIT),
    PROVEN_IDLE("ProvenIdle"),
    /** Only followers of the replica are left: none of them takes requests, so nothing of it can be in flight. */
    LEADER_GONE("LeaderGone"),

    MEMBERS_GONE_SLOWLY("MembersGoneSlowly"),
    COMPLETED("Completed"),
    TERMINATED_OUTSIDE("TerminatedOutsideOperator"),
    BUDGET_EXHAUSTED("BudgetExhausted"),
    NO_LONGER_WANTED("NoLongerWanted"),
    /** A move off a node going away that could not be proven idle in time, deleted with its grace as the drain would. */
    HANDED_BACK("HandedBackToDrain"),

    DISAGGREGATED("Disaggregated", Kind.REFUSAL),
    NO_GAUGE_LIST("NoGaugeList", Kind.REFUSAL),
    /** Holds that come from how the replica was deployed: nothing can be read from it. */
    TAKE_OVER("TakeOver"),
    NO_LEADER("NoLeader"),
    MULTIPLE_LEADERS("MultipleLeaders"),
    CONFIGURATION_DISAGREEMENT("ConfigurationDisagreement"),
    SIZE_MISMATCH("SizeMismatch");

    private enum Kind {
        /** The protocol at work: told as a Normal Event when it holds a replica. */
        WAIT,
        /** The replica is never deleted through the protocol. */
        REFUSAL,
        OTHER
    }

    private final String wire;
    private final Kind kind;

    Reason(String wire) {
        this(wire, Kind.OTHER);
    }

    Reason(String wire, Kind kind) {
        this.wire = wire;
        this.kind = kind;
    }

    /** The name status and Events carry. */
    public String wire() {
        return wire;
    }

    /**
     * Whether a hold for this reason is the protocol at work, told as a Normal Event: a withdrawal still spreading to
     * the endpoints or the router, a read still to come, an engine still generating, a client still connected. Every
     * other hold points at something to look at and is told as a Warning.
     */
    public boolean waits() {
        return kind == Kind.WAIT;
    }

    /** Whether an abort for this reason is a refusal: never retried by itself, only when the user asks. */
    public boolean refusal() {
        return kind == Kind.REFUSAL;
    }

    /** The reason status or an Event names; empty for a name no reason carries. */
    public static Optional<Reason> fromWire(String wire) {
        return Arrays.stream(values()).filter(r -> r.wire.equals(wire)).findFirst();
    }

    /** The wire name, so that a reason written into a message reads as status and Events name it. */
    @Override
    public String toString() {
        return wire;
    }
}
