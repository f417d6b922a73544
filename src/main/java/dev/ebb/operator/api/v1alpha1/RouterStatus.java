package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The router in front of the deployment: which one, where clients reach it, and whether it has a replica ready to route. */
public record RouterStatus(
        String name,

        @JsonPropertyDescription("Where clients in the cluster send their requests: the router Service's client port.")
        String address,

        Boolean ready,
        Integer readyReplicas,

        @JsonPropertyDescription(
                "Replicas that serve and are ready but that a router Pod does not route to, for a router that keeps its own list"
                        + " of engines (sglang-gateway); the operator adds them back on its next pass. Unset for a router that follows the labels.")
        Integer unroutedReplicas,

        @JsonPropertyDescription(
                "Router Pods still running other images than the operator now renders (a new operator release's defaults, a"
                        + " spec.router.image edit); they are replaced one at a time, each finishing its streams first.")
        Integer imageOutdated) {
    public RouterStatus(String name, String address, Boolean ready, Integer readyReplicas) {
        this(name, address, ready, readyReplicas, null, 0);
    }

    public RouterStatus withUnroutedReplicas(int unrouted) {
        return new RouterStatus(name, address, ready, readyReplicas, unrouted, imageOutdated);
    }

    public RouterStatus withImageOutdated(int outdated) {
        return new RouterStatus(name, address, ready, readyReplicas, unroutedReplicas, outdated);
    }
}
