package dev.ebb.operator.sandbox;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The least time a scale-down can take without cutting a request: retire the replicas whose longest remaining
 * generation is shortest, wait for that generation, then the drain hook's own least time. Pure.
 */
final class Floor {
    /** A generation still streaming at the change, on this replica, for this many more seconds. */
    record InFlight(String pod, double remaining) {}

    private Floor() {}

    /**
     * @param replicas every replica at the change, idle ones too
     * @param leaving how many of them go
     * @param hookAtLeast seconds the drain hook takes even on an idle engine
     */
    static double seconds(Collection<InFlight> inFlight, List<String> replicas, int leaving, double hookAtLeast) {
        if (leaving <= 0) {
            return 0;
        }
        Map<String, Double> longest =
                inFlight.stream().collect(Collectors.toMap(InFlight::pod, InFlight::remaining, Math::max));
        double wait = replicas.stream()
                .map(pod -> longest.getOrDefault(pod, 0.0))
                .sorted(Comparator.naturalOrder())
                .limit(leaving)
                .reduce(0.0, Math::max);
        return wait + hookAtLeast;
    }
}
