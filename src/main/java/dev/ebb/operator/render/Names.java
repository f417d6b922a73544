package dev.ebb.operator.render;

/** How the operator names what it creates; admission keeps every result within a 63-character DNS label. */
public final class Names {
    private Names() {
    }

    public static String pod(String deployment, String role, int ordinal, int member) {
        return replica(deployment, role, ordinal) + "-m" + member;
    }

    /** Also the name of the headless Service through which a multi-Pod replica's members find each other. */
    public static String replica(String deployment, String role, int ordinal) {
        return roleService(deployment, role) + "-r" + ordinal;
    }

    public static String roleService(String deployment, String role) {
        return deployment + "-" + role;
    }
}
