package dev.ebb.operator.soak;

import java.time.Duration;
import java.time.Instant;

/**
 * Something done to the world from outside the operator that may end a stream: a Pod deleted or evicted (with the
 * grace it was given), a container restarted, a router restarted.
 *
 * @param target the Pod's name, or for a router restart the deployment's
 * @param grace the drain window a deletion gave the Pod; zero for a restart, which ends every stream at once
 */
public record Disruption(Kind kind, String target, Instant at, Duration grace) {
    public enum Kind {
        DELETE_POD,
        DRAIN,
        CONTAINER_RESTART,
        ROUTER_RESTART
    }
}
