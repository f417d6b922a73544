package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** How a configuration change replaces the role's replicas. */
public record RolloutSpec(
        @Min(0)
        @Max(RolloutSpec.MAX_SURGE)
        @JsonPropertyDescription(
                "0 (default): each old replica is retired before its replacement is created. 1: the replacement"
                        + " is created first and the old replica retired once it is Ready, for clusters with a spare accelerator.")
        Integer maxSurge) {
    public static final int MAX_SURGE = 1;
}
