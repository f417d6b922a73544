package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.Set;

/** Asks each kind of router what it selects. */
@ApplicationScoped
public class RouterProbes implements RouterProbe {
    @Override
    public RouterView view(ModelDeployment deployment, Set<String> members, Instant withdrawnAt) {
        return RouterView.unavailable();
    }
}
