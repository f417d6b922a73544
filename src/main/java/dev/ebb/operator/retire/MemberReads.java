package dev.ebb.operator.retire;

import java.time.Instant;
import java.util.Optional;

/**
 * The latest read of one answering member and how many idle reads in a row it has had.
 *
 * @param quiet without a router: since when the member's gauges have read idle and its request counters have not
 *     moved, and what they stood at; empty while that is not known
 */
public record MemberReads(String verdict, double inFlight, int consecutiveIdle, Instant at, Optional<Quiet> quiet) {
    static final MemberReads NONE = new MemberReads("None", 0, 0, null);

    public MemberReads(String verdict, double inFlight, int consecutiveIdle, Instant at) {
        this(verdict, inFlight, consecutiveIdle, at, Optional.empty());
    }

    /** No request has reached the member since {@code since}: its request counters have stood at {@code requests}. */
    public record Quiet(double requests, Instant since) {}

    MemberReads withQuiet(Optional<Quiet> kept) {
        return new MemberReads(verdict, inFlight, consecutiveIdle, at, kept);
    }
}
