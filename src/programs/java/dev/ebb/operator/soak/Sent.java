package dev.ebb.operator.soak;

import dev.ebb.operator.sim.LoadGenerator;
import java.time.Duration;
import java.time.Instant;

/**
 * One request as the soak's clients sent it: the load generator's record with the length asked for, which the
 * record itself does not keep, and whether a router carried it.
 */
public record Sent(String deployment, boolean routed, LoadGenerator.Request request, Duration length) {
    /** When the generation would have ended had nothing stopped it. */
    public Instant wouldEnd() {
        return request.start().plus(length);
    }
}
