package dev.ebb.operator.reconcile;

import java.util.Comparator;
import java.util.NavigableMap;
import java.util.Optional;

/**
 * Which replica of a role leaves next when the role has more than it should. A replica that never ran (no
 * container of it ever started) goes first, directly: it holds no work. Otherwise the highest ordinal goes,
 * through the retirement protocol. Pure.
 */
public final class SurplusChoice {
    /** The replica to remove, and whether it may be deleted without the protocol. */
    public record Removal(ObservedReplica replica, boolean direct) {
    }

    private SurplusChoice() {
    }

    public static Optional<Removal> next(NavigableMap<Integer, ObservedReplica> replicas, int desired) {
        if (replicas.size() <= desired) {
            return Optional.empty();
        }
        Optional<ObservedReplica> neverRan = replicas.descendingMap().values().stream().filter(r -> !r.everRan()).findFirst();
        if (neverRan.isPresent()) {
            return Optional.of(new Removal(neverRan.get(), true));
        }
        return replicas.values().stream().max(Comparator.comparingInt(ObservedReplica::ordinal)).map(r -> new Removal(r, false));
    }
}
