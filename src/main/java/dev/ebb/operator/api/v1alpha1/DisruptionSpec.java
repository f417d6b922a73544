package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** How the role's replicas meet voluntary disruptions: node drains, cluster upgrades, autoscalers taking nodes away. */
public record DisruptionSpec(
        @Min(0)
        @Max(RoleSpec.MAX_REPLICAS)
        @JsonPropertyDescription(
                "Replicas an eviction may take from the role at once; " + DisruptionSpec.DEFAULT_MAX_UNAVAILABLE
                        + " when unset. Its PodDisruptionBudget counts"
                        + " Pods, and one evicted member takes its whole replica, so this many Pods.")
        Integer maxUnavailable,

        @SchemaFrom(type = NodeMaintenance.class)
        @JsonPropertyDescription(
                "Protocol (default): the role's Pods refuse eviction, and the operator moves each replica off a node"
                        + " that is cordoned or marked for removal: its replacement first where rollout.maxSurge allows, then the old one"
                        + " withdrawn, proven idle and deleted. A replica not proven idle within retirement.drainSeconds is deleted with"
                        + " its grace. Evict: evictions go through within maxUnavailable, each Pod finishing what its grace allows.")
        String nodeMaintenance) {
    public static final int DEFAULT_MAX_UNAVAILABLE = 1;
}
