package dev.ebb.operator.api.v1alpha1;

/** The router in front of the deployment: which one, and whether it has a replica ready to route. */
public record RouterStatus(String name, Boolean ready, Integer readyReplicas) {
}
