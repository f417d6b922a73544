package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.model.annotation.LabelSelector;
import io.fabric8.kubernetes.model.annotation.StatusReplicas;

/** What the scale subresource reads back: the scaled role's replicas as they are, and how to find its serving leaders. */
public record ScalingStatus(
        @JsonPropertyDescription("The role the scale subresource drives.")
        String role,

        @StatusReplicas @JsonPropertyDescription("Replicas of the scaled role that exist, a leaving one included.")
        Integer replicas,

        @LabelSelector
        @JsonPropertyDescription(
                "Label selector of the scaled role's serving leaders (member 0), in the serialized form autoscalers read.")
        String selector,

        @JsonPropertyDescription(
                "Set while spec.scaling.replicas decides the scaled role's count against what its spec.roles[].replicas says.")
        String override) {}
