package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;

/** One Pod's place: which deployment, role, replica and member it renders. */
public record MemberSlot(DesiredDeployment deployment, DesiredRole role, int ordinal, int member) {
    public boolean leader() {
        return member == 0;
    }

    public String podName() {
        return Names.pod(deployment.owner().name(), role.name(), ordinal, member);
    }

    /** The leader's stable DNS name inside the namespace: hostname.subdomain of the replica's headless Service. */
    public String leaderHost() {
        return leaderHost(deployment.owner().name(), role.name(), ordinal);
    }

    static String leaderHost(String deployment, String role, int ordinal) {
        return Names.pod(deployment, role, ordinal, 0) + "." + Names.replica(deployment, role, ordinal);
    }
}
