package dev.ebb.operator.api.v1alpha1;

public record RoleStatus(
        String name,
        String kind,
        int desired,
        int current,
        int ready,
        int updated,
        boolean unmanaged,
        DrainStatus drain) {
}
