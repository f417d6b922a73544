package dev.ebb.operator.retire;

import java.time.Instant;

/** The latest read of one answering member and how many idle reads in a row it has had. */
public record MemberReads(String verdict, double inFlight, int consecutiveIdle, Instant at) {
    static final MemberReads NONE = new MemberReads("None", 0, 0, null);
}
