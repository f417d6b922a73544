package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.read.Reading;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The order in which surplus replicas of a role leave. Those that never ran go first and directly: they hold no work.
 * Then those at an outdated configuration, which a rollout would replace anyway. Then the idlest, decided by one read
 * of each remaining candidate: lowest in-flight sum first, ties to the highest ordinal, and a replica that could not be
 * read last (it may hold anything, but it still goes once nothing readable is left). Pure.
 */
public final class LeavingOrder {
    /** status.retirement.chosenBecause never grows past this, however many replicas the role has. */
    public static final int MAX_BECAUSE = RetirementStatus.MAX_CHOSEN_BECAUSE;
    /** How many readings the sentence names before it only counts the rest. */
    private static final int READINGS_NAMED = 6;

    /**
     * A replica that may leave.
     *
     * @param reading what one read of its answering members established; empty while it is not read yet
     */
    public record Candidate(int ordinal, boolean everRan, boolean currentConfig, Optional<Reading> reading) {}

    /** A replica chosen to leave; {@code direct} ones skip the protocol. */
    public record Choice(int ordinal, boolean direct, String because) {}

    /**
     * @param leaving the replicas that leave, in the order they go
     * @param awaiting the ordinals whose read the rest of the choice waits for; empty once the choice is whole
     */
    public record Order(List<Choice> leaving, List<Integer> awaiting) {}

    private LeavingOrder() {}

    /**
     * Chooses {@code count} of the candidates, or as many as the readings in hand allow.
     *
     * @param byLoad false takes the highest ordinals of those at the current configuration, reading none of them
     */
    public static Order choose(Collection<Candidate> candidates, int count, boolean byLoad) {
        Comparator<Candidate> highestFirst =
                Comparator.comparingInt(Candidate::ordinal).reversed();
        List<Choice> leaving = new ArrayList<>();
        candidates.stream()
                .filter(c -> !c.everRan())
                .sorted(highestFirst)
                .limit(Math.max(0, count))
                .forEach(c -> leaving.add(new Choice(
                        c.ordinal(), true, "never ran: none of its containers started, so it holds no work")));
        candidates.stream()
                .filter(c -> c.everRan() && !c.currentConfig())
                .sorted(highestFirst)
                .limit(Math.max(0, count - leaving.size()))
                .forEach(c -> leaving.add(new Choice(
                        c.ordinal(), false, "at an outdated configuration, which goes before the current one")));
        int still = count - leaving.size();
        List<Candidate> current = candidates.stream()
                .filter(c -> c.everRan() && c.currentConfig())
                .sorted(highestFirst)
                .toList();
        if (still <= 0 || current.isEmpty()) {
            return new Order(List.copyOf(leaving), List.of());
        }
        if (still >= current.size()) {
            // every one of them leaves, so no read could change which
            current.forEach(c -> leaving.add(new Choice(
                    c.ordinal(), false, "the role keeps none of its replicas at the current configuration")));
            return new Order(List.copyOf(leaving), List.of());
        }
        if (!byLoad) {
            current.stream()
                    .limit(still)
                    .forEach(c -> leaving.add(new Choice(
                            c.ordinal(),
                            false,
                            "highest ordinal at the current configuration; the choice by load is turned off")));
            return new Order(List.copyOf(leaving), List.of());
        }
        List<Integer> unread = current.stream()
                .filter(c -> c.reading().isEmpty())
                .map(Candidate::ordinal)
                .sorted()
                .toList();
        if (!unread.isEmpty()) {
            return new Order(List.copyOf(leaving), unread);
        }
        List<Candidate> ranked = current.stream()
                .sorted(Comparator.comparing((Candidate c) -> inFlight(c).isEmpty())
                        .thenComparingDouble(c -> inFlight(c).orElse(0.0))
                        .thenComparing(highestFirst))
                .toList();
        String readings = named(ranked);
        for (int rank = 0; rank < still; rank++) {
            Candidate chosen = ranked.get(rank);
            String place = place(rank, ranked.size());
            String why = inFlight(chosen)
                    .map(sum -> "in flight " + number(sum) + ", " + place)
                    .orElse("unreadable, chosen only after every readable replica (" + ranked.size() + " read)");
            leaving.add(new Choice(chosen.ordinal(), false, Sentences.bounded(why + ": " + readings, MAX_BECAUSE)));
        }
        return new Order(List.copyOf(leaving), List.of());
    }

    /** What the answering members of one replica say together: the sum of their gauges, unreadable if any one is. */
    public static Reading combined(List<Reading> readings) {
        double sum = 0;
        for (Reading reading : readings) {
            if (reading instanceof Reading.Busy busy) {
                sum += busy.inFlight();
            } else if (!(reading instanceof Reading.Idle)) {
                return reading;
            }
        }
        if (readings.isEmpty()) {
            return new Reading.Failed("no member answers for the replica");
        }
        return sum == 0 ? new Reading.Idle() : new Reading.Busy(sum);
    }

    /** The in-flight sum a reading proves; nothing for a read that failed, lacked gauges or gave an impossible count. */
    private static Optional<Double> inFlight(Candidate candidate) {
        Reading reading = candidate.reading().orElseThrow();
        if (reading instanceof Reading.Idle) {
            return Optional.of(0.0);
        }
        if (reading instanceof Reading.Busy busy && Double.isFinite(busy.inFlight()) && busy.inFlight() >= 0) {
            return Optional.of(busy.inFlight());
        }
        return Optional.empty();
    }

    private static String named(List<Candidate> ranked) {
        String named = ranked.stream()
                .limit(READINGS_NAMED)
                .map(c -> "r" + c.ordinal() + " "
                        + inFlight(c).map(LeavingOrder::number).orElse("unreadable"))
                .collect(Collectors.joining(", "));
        return ranked.size() > READINGS_NAMED ? named + ", and " + (ranked.size() - READINGS_NAMED) + " more" : named;
    }

    private static String place(int rank, int read) {
        return rank == 0 ? "lowest of " + read + " read" : "rank " + (rank + 1) + " of " + read + " read, lowest first";
    }

    private static String number(double value) {
        if (value == Math.rint(value) && value < 1e15) {
            return Long.toString((long) value);
        }
        return String.format(Locale.ROOT, "%.4g", value);
    }
}
