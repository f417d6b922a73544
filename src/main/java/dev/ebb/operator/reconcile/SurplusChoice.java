package dev.ebb.operator.reconcile;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which replicas of a role leave when the role has more than it should, and which stay. A replica a retirement already
 * holds stays chosen (see {@link #split}). Of the others, a replica that never ran (no container of it ever started)
 * goes first, directly: it holds no work. Otherwise the highest ordinal goes, through the retirement protocol. Pure.
 */
public final class SurplusChoice {
    /** The replica to remove, and whether it may be deleted without the protocol. */
    public record Removal(ObservedReplica replica, boolean direct) {
    }

    /**
     * A role divided: the replicas that leave, in the order they go, and those that stay, which are the only ones a
     * rollout replaces, the only ones refilled, and which the role fills up to its desired count.
     */
    public record Split(List<Removal> leaving, NavigableMap<Integer, ObservedReplica> staying) {
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

    /**
     * Splits a role given the ordinals a retirement holds (one under way, or kept after an abort). Such a replica at an
     * older configuration always leaves: keeping it would only mean replacing it later, and a rollout that frees an
     * ordinal below it must never make it wanted again, or it would be replaced instead of retired. One at the role's
     * configuration leaves while the role has its desired count without it, so a scale-up keeps it.
     */
    public static Split split(NavigableMap<Integer, ObservedReplica> replicas, int desired, Set<Integer> held, String hash) {
        NavigableMap<Integer, ObservedReplica> free = new TreeMap<>(replicas);
        NavigableMap<Integer, ObservedReplica> holding = new TreeMap<>();
        held.stream().filter(replicas::containsKey).forEach(ordinal -> holding.put(ordinal, free.remove(ordinal)));

        List<Removal> leaving = new ArrayList<>();
        Optional<Removal> next = next(free, desired);
        while (next.isPresent()) {
            leaving.add(next.get());
            free.remove(next.get().replica().ordinal());
            next = next(free, desired);
        }
        int stillNeeded = Math.max(0, desired - free.size());
        NavigableMap<Integer, ObservedReplica> staying = new TreeMap<>(free);
        holding.values().stream().filter(r -> r.configHash().filter(hash::equals).isPresent()).limit(stillNeeded)
                .forEach(r -> staying.put(r.ordinal(), r));
        List<Removal> heldLeaving = holding.descendingMap().values().stream().filter(r -> !staying.containsKey(r.ordinal()))
                .map(r -> new Removal(r, false)).toList();
        List<Removal> all = new ArrayList<>(heldLeaving);
        all.addAll(leaving);
        return new Split(List.copyOf(all), staying);
    }
}
