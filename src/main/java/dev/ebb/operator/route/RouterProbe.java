package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import java.time.Instant;
import java.util.Set;

/**
 * Asks the router in front of a deployment whether it still sends work to some members. Called only for deployments
 * with {@code spec.router}; an answer it cannot get is {@link RouterView#unavailable()}, never an exception.
 */
public interface RouterProbe {
    RouterView view(ModelDeployment deployment, Set<String> members, Instant withdrawnAt);
}
