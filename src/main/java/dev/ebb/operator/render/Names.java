package dev.ebb.operator.render;

import dev.ebb.operator.api.v1alpha1.RoleSpec;

/** How the operator names what it creates; admission keeps every result within a 63-character DNS label. */
public final class Names {
    private Names() {}

    public static String pod(String deployment, String role, int ordinal, int member) {
        return replica(deployment, role, ordinal) + "-m" + member;
    }

    /** Also the name of the headless Service through which a multi-Pod replica's members find each other. */
    public static String replica(String deployment, String role, int ordinal) {
        return roleService(deployment, role) + "-r" + ordinal;
    }

    /** The router's Deployment, Service and account; admission keeps roles from taking the same name. */
    public static String router(String deployment) {
        return deployment + "-" + RoleSpec.RESERVED_NAME;
    }

    /** The ConfigMap that holds one revision of the drain hook for the deployment's engine Pods. */
    public static String drainHook(String deployment, String revision) {
        return deployment + "-drain-hook-" + revision;
    }

    public static String roleService(String deployment, String role) {
        return deployment + "-" + role;
    }
}
