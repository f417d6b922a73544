package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Asks the router in front of a deployment whether it still sends work to some members. Called only for deployments
 * with {@code spec.router}; an answer it cannot get is {@link RouterView#unavailable}, never an exception.
 */
public interface RouterProbe {
    /** @param routerPods the Pods of the deployment's router, as the caches hold them */
    RouterView view(ModelDeployment deployment, Collection<Pod> routerPods, List<Pod> members);

    /**
     * Asks the router to stop sending to members already labelled withdrawn, for a router that would otherwise learn
     * of it late; nothing for one that follows the label by itself. Whether it worked is never told here: only
     * {@link #view} says so.
     */
    default void withdraw(ModelDeployment deployment, Collection<Pod> routerPods, List<Pod> members) {}

    /**
     * Tells the router that members given back their serving label serve again, for a router that might not take
     * them back by itself after {@link #withdraw}; nothing for one that follows the label.
     */
    default void restore(ModelDeployment deployment, Collection<Pod> routerPods, List<Pod> members) {}

    /**
     * Each router Pod's own list of the engines it routes to, for a router that keeps one apart from the labels
     * (SGLang's gateway); empty for one that follows the labels by itself.
     */
    default Optional<List<GatewayMembership.Listing>> workerLists(
            ModelDeployment deployment, Collection<Pod> routerPods) {
        return Optional.empty();
    }

    /** Tells each router Pod what {@link GatewayMembership#decide} found it must drop and take back. */
    default void tell(ModelDeployment deployment, Collection<Pod> routerPods, GatewayMembership.Plan plan) {}
}
