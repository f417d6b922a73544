package dev.ebb.operator.api;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import java.util.List;
import java.util.Optional;

/**
 * The router a deployment asked for, with every default filled in.
 *
 * @param drainSeconds how long a leaving router Pod may carry its streams, as spec.router sets it; empty for the
 *     default, which depends on the roles and is worked out with the rest of the router's drain window
 */
public record DesiredRouter(
        RouterKind kind, int replicas, RouterImages images, List<String> extraArgs, Optional<Integer> drainSeconds) {
    public DesiredRouter {
        extraArgs = List.copyOf(extraArgs);
    }
}
