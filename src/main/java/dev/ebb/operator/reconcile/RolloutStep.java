package dev.ebb.operator.reconcile;

import java.util.Comparator;
import java.util.List;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Which replica of a role a rollout retires next, if any may go now. Only replicas that stay are replaced: one a
 * scale-down takes away is retired as surplus, even while its retirement is held or kept after an abort, so the two
 * never act on the same replica and a held scale-down never stops the rollout. One at a time: the replica whose
 * retirement is under way is the answer until it is gone; otherwise nothing goes while a Pod of the role is
 * terminating, while the last replacement is not yet Ready, or while a replica that stays is missing (its creation
 * comes first). A replica whose last retirement aborted and may not be retried yet is passed over, so the rollout
 * moves on to the next. A replica at an older configuration that is not Ready goes first, since it serves nothing
 * already; otherwise the highest ordinal. What counts as current is the caller's: the config hash, on the user's
 * refresh also the drain hook and default image the replica carries, and the node it runs on not going away. While
 * replicas must move off nodes going away, a replacement the scheduler cannot place holds nothing up: the nodes' drains
 * take the replicas whether or not there is room for them elsewhere, so the protocol had better take them first. Pure.
 */
public final class RolloutStep {
    private RolloutStep() {}

    /**
     * @param replicas every replica of the role
     * @param staying those the role keeps (see {@link SurplusChoice#split})
     * @param desired how many replicas the role keeps during the rollout: its count, and one more when it may surge
     * @param current whether a replica needs no replacing
     * @param retiring the ordinals whose rollout retirement is under way
     * @param waiting the ordinals to pass over for now
     * @param nodesGoingAway whether a replica that must go runs on a node going away
     */
    public static Optional<ObservedReplica> next(
            NavigableMap<Integer, ObservedReplica> replicas,
            NavigableMap<Integer, ObservedReplica> staying,
            int desired,
            Predicate<ObservedReplica> current,
            Set<Integer> retiring,
            Set<Integer> waiting,
            boolean nodesGoingAway) {
        Optional<ObservedReplica> underWay = staying.values().stream()
                .filter(r -> retiring.contains(r.ordinal()) && !current.test(r))
                .findFirst();
        if (underWay.isPresent()) {
            return underWay;
        }
        if (staying.size() != desired || replicas.values().stream().anyMatch(ObservedReplica::terminating)) {
            return Optional.empty();
        }
        List<ObservedReplica> outdated = staying.values().stream()
                .filter(r -> !current.test(r) && !waiting.contains(r.ordinal()))
                .toList();
        boolean replacementPending = staying.values().stream()
                .anyMatch(r -> current.test(r) && !r.ready() && !(nodesGoingAway && r.unplaceable()));
        if (outdated.isEmpty() || replacementPending) {
            return Optional.empty();
        }
        Comparator<ObservedReplica> highestFirst =
                Comparator.comparingInt(ObservedReplica::ordinal).reversed();
        return outdated.stream()
                .filter(r -> !r.ready())
                .min(highestFirst)
                .or(() -> outdated.stream().min(highestFirst));
    }

    /** Replicas created at this config hash are current. */
    public static Predicate<ObservedReplica> atHash(String hash) {
        return replica -> replica.configHash().filter(hash::equals).isPresent();
    }
}
