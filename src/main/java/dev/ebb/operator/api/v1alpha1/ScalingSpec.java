package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.model.annotation.SpecReplicas;

/**
 * The role the scale subresource drives (HPA, KEDA, kubectl scale), and the replicas they write. The subresource's
 * specReplicasPath cannot index into spec.roles, so the count an autoscaler writes lives here, on a plain path.
 */
public record ScalingSpec(
        @Size(min = 1, max = RoleSpec.MAX_NAME_LENGTH)
        @Pattern(RoleSpec.NAME_PATTERN)
        @JsonPropertyDescription(
                "The role the scale subresource drives; the first role when unset. Required when any role is Prefill or Decode.")
        String role,

        @SpecReplicas
        @Min(RoleSpec.MIN_REPLICAS)
        @Max(RoleSpec.MAX_REPLICAS)
        @JsonPropertyDescription(
                "Replicas of the scaled role, written by autoscalers through /scale; when set, it takes precedence over that role's spec.roles[].replicas.")
        Integer replicas) {}
