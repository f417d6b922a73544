package dev.ebb.operator.read;

import java.util.List;

/** What one read of a member's in-flight gauges established. */
public sealed interface Reading {
    /** Every expected gauge present, and their sum is zero. */
    record Idle() implements Reading {}

    /** Every expected gauge present, and this many requests are in flight. */
    record Busy(double inFlight) implements Reading {}

    /** Some expected gauges are absent: the sum of the others proves nothing. */
    record Partial(List<String> missing) implements Reading {}

    /** Nothing was measured: no answer, an error, or a body that is not metrics. */
    record Failed(String why) implements Reading {}
}
