package dev.ebb.operator.retire;

import dev.ebb.operator.read.Reading;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;

/**
 * The latest read of one answering member and how many idle reads in a row it has had.
 *
 * @param quiet without a router: since when the member's gauges have read idle and its request counters have not
 *     moved, and what they stood at; empty while that is not known
 */
public record MemberReads(Verdict verdict, double inFlight, int consecutiveIdle, Instant at, Optional<Quiet> quiet) {
    static final MemberReads NONE = new MemberReads(Verdict.NONE, 0, 0, null);

    public MemberReads(Verdict verdict, double inFlight, int consecutiveIdle, Instant at) {
        this(verdict, inFlight, consecutiveIdle, at, Optional.empty());
    }

    /** No request has reached the member since {@code since}: its request counters have stood at {@code requests}. */
    public record Quiet(double requests, Instant since) {}

    MemberReads withQuiet(Optional<Quiet> kept) {
        return new MemberReads(verdict, inFlight, consecutiveIdle, at, kept);
    }

    /**
     * What a member's reads hold: the verdict of its latest read, or a mark the machine set in its place. Status
     * (status.retirements[].reads[].verdict) carries each by its wire name.
     */
    public enum Verdict {
        /** Not read yet. */
        NONE("None"),
        IDLE("Idle"),
        BUSY("Busy"),
        PARTIAL("Partial"),
        FAILED("Failed"),
        /** Without a router: idle gauges, but clients still connected to the member. */
        OPEN_CONNECTIONS("OpenConnections"),
        /** A mark: an engine container of the replica restarted at this time, and the run starts over. */
        CONTAINER_RESTARTED("ContainerRestarted"),
        /** A mark: the withdrawal was lost at this time, and is not yet seen back. */
        WITHDRAWAL_LOST("WithdrawalLost"),
        /** A mark: the withdrawal was seen to hold at this time; no read counts before the margin. */
        AWAITING_PROPAGATION("AwaitingPropagation");

        private final String wire;

        Verdict(String wire) {
            this.wire = wire;
        }

        /** The verdict of a read of the member's gauges. */
        static Verdict of(Reading reading) {
            if (reading instanceof Reading.Idle) {
                return IDLE;
            }
            if (reading instanceof Reading.Busy) {
                return BUSY;
            }
            return reading instanceof Reading.Partial ? PARTIAL : FAILED;
        }

        /** A mark of the withdrawal settling: while it stands, the member's reads wait for the margin. */
        boolean marksMargin() {
            return this == WITHDRAWAL_LOST || this == AWAITING_PROPAGATION;
        }

        /** The name status carries. */
        public String wire() {
            return wire;
        }

        /** The verdict status names; empty for a name no verdict carries. */
        public static Optional<Verdict> fromWire(String wire) {
            return Arrays.stream(values()).filter(v -> v.wire.equals(wire)).findFirst();
        }

        @Override
        public String toString() {
            return wire;
        }
    }
}
