package dev.ebb.operator.api.v1alpha1;

import java.util.Arrays;
import java.util.Optional;

/** What happens to a role's replicas when their node is drained, upgraded or taken away by an autoscaler. */
public enum NodeMaintenance {
    /** Evictions are refused; the operator moves each replica through the retirement protocol. */
    Protocol,
    /** Evictions go through, up to the role's budget, and each evicted Pod has only its drain window. */
    Evict;

    public static Optional<NodeMaintenance> fromWireName(String value) {
        return Arrays.stream(values()).filter(m -> m.name().equals(value)).findFirst();
    }
}
