package dev.ebb.operator.api;

import java.util.Optional;

/**
 * The role the scale subresource drives, and where its replica count comes from.
 *
 * @param roleIndex the scaled role's place in spec.roles
 * @param scalingReplicas spec.scaling.replicas, which autoscalers write through /scale
 * @param roleReplicas the role's own spec.roles[].replicas as written
 */
public record DesiredScaling(
        String role, int roleIndex, Optional<Integer> scalingReplicas, Optional<Integer> roleReplicas) {

    /**
     * Said when spec.scaling.replicas decides a count other than the one the role's own field asks for, so that a user
     * editing spec.roles[].replicas sees why nothing follows. A role that leaves its own replicas unset asks for nothing.
     */
    public Optional<String> override() {
        return scalingReplicas.flatMap(replicas -> roleReplicas
                .filter(written -> !written.equals(replicas))
                .map(written -> "spec.scaling.replicas (" + replicas + ") takes precedence over spec.roles[" + roleIndex
                        + "].replicas (" + written + ") of role " + role
                        + ": an autoscaler or kubectl scale writes it through the scale subresource"));
    }
}
