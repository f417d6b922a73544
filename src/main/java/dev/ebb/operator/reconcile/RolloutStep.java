package dev.ebb.operator.reconcile;

import java.util.Comparator;
import java.util.List;
import java.util.NavigableMap;
import java.util.Optional;

/**
 * Which replica of a role a rollout replaces next, if any may go now. Only replicas that stay are replaced: one a
 * scale-down takes away is retired, even while its retirement is held or kept after an abort, so the two never act
 * on the same replica and a held scale-down never stops the rollout. One at a time: nothing goes while a Pod of the
 * role is terminating, while the last replacement is not yet Ready, or while a replica that stays is missing (its
 * creation comes first). A replica at an older configuration that is not Ready goes first, since it serves nothing
 * already; otherwise the highest ordinal. Pure.
 */
public final class RolloutStep {
    private RolloutStep() {
    }

    /**
     * @param replicas every replica of the role
     * @param staying those the role keeps (see {@link SurplusChoice#split})
     */
    public static Optional<ObservedReplica> next(NavigableMap<Integer, ObservedReplica> replicas, NavigableMap<Integer, ObservedReplica> staying,
            int desired, String hash) {
        if (staying.size() != desired || replicas.values().stream().anyMatch(ObservedReplica::terminating)) {
            return Optional.empty();
        }
        List<ObservedReplica> outdated = staying.values().stream().filter(r -> r.configHash().filter(hash::equals).isEmpty()).toList();
        boolean replacementPending = staying.values().stream()
                .anyMatch(r -> r.configHash().filter(hash::equals).isPresent() && !r.ready());
        if (outdated.isEmpty() || replacementPending) {
            return Optional.empty();
        }
        Comparator<ObservedReplica> highestFirst = Comparator.comparingInt(ObservedReplica::ordinal).reversed();
        return outdated.stream().filter(r -> !r.ready()).min(highestFirst)
                .or(() -> outdated.stream().min(highestFirst));
    }
}
