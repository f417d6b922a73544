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
                + " replaced; an operator upgrade restarts no engine for it.")
        int hookOutdated,
        DrainStatus drain) {
}
