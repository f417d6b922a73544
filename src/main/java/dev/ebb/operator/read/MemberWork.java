package dev.ebb.operator.read;

import java.util.Optional;

/**
 * One pass's read of a member: its in-flight gauges and, where clients reach it without a router, its connection
 * table, both taken in the same pass.
 *
 * @param connections empty when the table was not asked for
 * @param requests with the table, the sum of the engine's request counters on the same page as the gauges; empty when
 *     not asked for or not readable
 */
public record MemberWork(Reading gauges, Optional<ConnectionRead.Peers> connections, Optional<Double> requests) {
    public static MemberWork gaugesOnly(Reading gauges) {
        return new MemberWork(gauges, Optional.empty(), Optional.empty());
    }
}
