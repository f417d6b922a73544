package dev.ebb.operator.reconcile;

import java.util.Comparator;
import java.util.List;
import java.util.NavigableMap;
import java.util.Optional;

/**
 * Which replica of a role a rollout replaces next, if any may go now. One at a time: nothing goes while a replica of
 * the role is leaving, while the last replacement is not yet Ready, or while the role is being scaled (a scale-down
 * retires replicas first, so the two never act on the same one). A replica at an older configuration that is not
 * Ready goes first, since it serves nothing already; otherwise the highest ordinal. Pure.
 */
public final class RolloutStep {
    private RolloutStep() {
    }

    public static Optional<ObservedReplica> next(NavigableMap<Integer, ObservedReplica> replicas, int desired, String hash) {
        if (replicas.size() != desired || replicas.values().stream().anyMatch(ObservedReplica::terminating)) {
            return Optional.empty();
        }
        List<ObservedReplica> outdated = replicas.values().stream().filter(r -> r.configHash().filter(hash::equals).isEmpty()).toList();
        boolean replacementPending = replicas.values().stream()
                .anyMatch(r -> r.configHash().filter(hash::equals).isPresent() && !r.ready());
        if (outdated.isEmpty() || replacementPending) {
            return Optional.empty();
        }
        Comparator<ObservedReplica> highestFirst = Comparator.comparingInt(ObservedReplica::ordinal).reversed();
        return outdated.stream().filter(r -> !r.ready()).min(highestFirst)
                .or(() -> outdated.stream().min(highestFirst));
    }
}
