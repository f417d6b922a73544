package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The router in front of the deployment: which one, where clients reach it, and whether it has a replica ready to route. */
public record RouterStatus(
        String name,
        @JsonPropertyDescription("Where clients in the cluster send their requests: the router Service's client port.")
        String address,
        Boolean ready,
        Integer readyReplicas) {
}
