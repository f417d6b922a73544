package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

public record RoleStatus(
        String name,
        String kind,
        int desired,
        int current,
        int ready,
        int updated,
        boolean unmanaged,

        @JsonPropertyDescription(
                "Pods that carry an older drain hook than this operator renders. They keep it until they are"
                        + " replaced, or until the annotation serving.ebb.dev/refresh-hooks is set to a new value; an operator upgrade"
                        + " restarts no engine for it.")
        int hookOutdated,

        @JsonPropertyDescription(
                "Pods of a role that takes the operator's default engine image and run an older default than"
                        + " this operator's. They keep it until they are replaced, or until the annotation serving.ebb.dev/refresh-hooks is"
                        + " set to a new value; an operator upgrade restarts no engine for it.")
        int imageOutdated,

        @JsonPropertyDescription(
                "Replicas of several Pods of which some are placed on nodes, holding their accelerators, while"
                        + " the scheduler finds no room for the rest. Each is deleted and held back once it has waited"
                        + " spec.roles[].partialPlacementSeconds.")
        int partlyScheduled,

        @JsonPropertyDescription(
                "Pods the operator keeps from the scheduler (gate serving.ebb.dev/held-back) after their replica"
                        + " was released for holding its nodes in part; each says until when in the annotation serving.ebb.dev/held-back-until.")
        int heldBack,

        DrainStatus drain) {}
