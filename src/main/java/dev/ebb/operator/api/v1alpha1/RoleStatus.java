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
        @JsonPropertyDescription("Pods that carry an older drain hook than this operator renders. They keep it until they are"
                + " replaced, or until the annotation serving.ebb.dev/refresh-hooks is set to a new value; an operator upgrade"
                + " restarts no engine for it.")
        int hookOutdated,
        @JsonPropertyDescription("Pods of a role that takes the operator's default engine image and run an older default than"
                + " this operator's. They keep it until they are replaced, or until the annotation serving.ebb.dev/refresh-hooks is"
                + " set to a new value; an operator upgrade restarts no engine for it.")
        int imageOutdated,
        DrainStatus drain) {
}
