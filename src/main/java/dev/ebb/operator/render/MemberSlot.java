package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import java.util.Map;
import java.util.Optional;

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
        return memberHost(deployment.owner().name(), role.name(), ordinal, 0);
    }

    /** A member's stable DNS name inside the namespace, as {@link #leaderHost()} is the leader's. */
    static String memberHost(String deployment, String role, int ordinal, int member) {
        return Names.pod(deployment, role, ordinal, member) + "." + Names.replica(deployment, role, ordinal);
    }

    /** A follower's leader: its Pod's name, and the stable name it is reached by ({@link #leaderHost()}). */
    public record Leader(String pod, String host) {}

    /**
     * The leader of the replica a Pod follows, as the Pod's own labels name it; empty for a leader, and for labels that
     * name no replica.
     */
    public static Optional<Leader> leaderOf(Map<String, String> labels) {
        String deployment = labels.get(Labels.DEPLOYMENT);
        String role = labels.get(Labels.ROLE);
        Optional<Integer> ordinal = Labels.number(labels.get(Labels.REPLICA));
        if (labels.getOrDefault(Labels.MEMBER_INDEX, Labels.LEADER_INDEX).equals(Labels.LEADER_INDEX)
                || deployment == null
                || role == null
                || ordinal.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Leader(
                Names.pod(deployment, role, ordinal.get(), 0), memberHost(deployment, role, ordinal.get(), 0)));
    }
}
