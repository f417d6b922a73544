package dev.ebb.operator.api;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import java.util.List;

/** The router a deployment asked for, with every default filled in. */
public record DesiredRouter(RouterKind kind, int replicas, RouterImages images, List<String> extraArgs) {
    public DesiredRouter {
        extraArgs = List.copyOf(extraArgs);
    }
}
