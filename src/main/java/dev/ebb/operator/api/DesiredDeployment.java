package dev.ebb.operator.api;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.List;
import java.util.Optional;

/** A ModelDeployment that passed every check, with every default filled in: what the renderer works from. */
public record DesiredDeployment(
        Owner owner,
        Engine engine,
        String modelName,
        Optional<String> modelPath,
        Optional<DesiredRouter> router,
        List<DesiredRole> roles,
        DesiredScaling scaling,
        Platform platform) {

    /** The same deployment, rendered for a cluster that supports this. */
    public DesiredDeployment on(Platform cluster) {
        return new DesiredDeployment(owner, engine, modelName, modelPath, router, roles, scaling, cluster);
    }

    /** The identity every rendered object points back to. */
    public record Owner(String apiVersion, String kind, String name, String namespace, String uid) {}

    /** What the engine loads: the path when one is given, the model name otherwise. */
    public String modelSource() {
        return modelPath.orElse(modelName);
    }
}
