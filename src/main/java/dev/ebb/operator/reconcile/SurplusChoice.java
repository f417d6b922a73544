package dev.ebb.operator.reconcile;

import dev.ebb.operator.read.Reading;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which replicas of a role leave when the role has more than it should, and which stay. A replica a retirement already
 * holds stays chosen (see {@link #split}). The others leave in the order {@link LeavingOrder} gives: never-ran ones
 * directly, then outdated ones, then the idlest by the readings in hand. Pure.
 */
public final class SurplusChoice {
    /** The replica to remove, whether it may be deleted without the protocol, and what the choice rested on. */
    public record Removal(ObservedReplica replica, boolean direct, String chosenBecause) {}

    /**
     * A role divided: the replicas that leave, in the order they go, and those that stay, which are the only ones a
     * rollout replaces, the only ones refilled, and which the role fills up to its desired count.
     *
     * @param awaitingReads candidates the choice cannot rank until each is read once; meanwhile they count as
     *     staying, so nothing is created and no rollout step is taken while the role is over its count
     */
    public record Split(
            List<Removal> leaving,
            NavigableMap<Integer, ObservedReplica> staying,
            List<ObservedReplica> awaitingReads) {}

    static final String HELD_BECAUSE = "kept after its earlier retirement aborted, and still surplus";

    private SurplusChoice() {}

    /**
     * Splits a role given the ordinals a retirement holds (one under way, or kept after an abort). Such a replica at an
     * older configuration always leaves: keeping it would only mean replacing it later, and a rollout that frees an
     * ordinal below it must never make it wanted again, or it would be replaced instead of retired. One at the role's
     * configuration leaves while the role has its desired count without it, so a scale-up keeps it.
     *
     * @param readings per ordinal, what one read of the replica's answering members established
     * @param byLoad whether the idlest leave (see {@link LeavingOrder#choose})
     */
    public static Split split(
            NavigableMap<Integer, ObservedReplica> replicas,
            int desired,
            Set<Integer> held,
            String hash,
            Map<Integer, Reading> readings,
            boolean byLoad) {
        NavigableMap<Integer, ObservedReplica> free = new TreeMap<>(replicas);
        NavigableMap<Integer, ObservedReplica> holding = new TreeMap<>();
        held.stream().filter(replicas::containsKey).forEach(ordinal -> holding.put(ordinal, free.remove(ordinal)));

        List<LeavingOrder.Candidate> candidates = free.values().stream()
                .map(r -> new LeavingOrder.Candidate(
                        r.ordinal(),
                        r.everRan(),
                        r.configHash().filter(hash::equals).isPresent(),
                        Optional.ofNullable(readings.get(r.ordinal()))))
                .toList();
        LeavingOrder.Order order = LeavingOrder.choose(candidates, free.size() - desired, byLoad);
        List<Removal> leaving = new ArrayList<>();
        for (LeavingOrder.Choice choice : order.leaving()) {
            leaving.add(new Removal(free.remove(choice.ordinal()), choice.direct(), choice.because()));
        }
        List<ObservedReplica> awaiting =
                order.awaiting().stream().map(free::get).toList();

        int stillNeeded = Math.max(0, desired - free.size());
        NavigableMap<Integer, ObservedReplica> staying = new TreeMap<>(free);
        holding.values().stream()
                .filter(r -> r.configHash().filter(hash::equals).isPresent())
                .limit(stillNeeded)
                .forEach(r -> staying.put(r.ordinal(), r));
        List<Removal> heldLeaving = holding.descendingMap().values().stream()
                .filter(r -> !staying.containsKey(r.ordinal()))
                .map(r -> new Removal(r, false, HELD_BECAUSE))
                .toList();
        List<Removal> all = new ArrayList<>(heldLeaving);
        all.addAll(leaving);
        return new Split(List.copyOf(all), staying, awaiting);
    }
}
