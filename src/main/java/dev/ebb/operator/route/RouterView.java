package dev.ebb.operator.route;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What a deployment's router says about a retirement's target members.
 *
 * @param selects whether the router still selects any of them; empty when the router could not be asked, which is
 *     never taken for "withdrawn"
 * @param dispatches the router's count of scheduling decisions so far per member, for routers that count them (none
 *     otherwise); the retirement compares them with the counts it read before the withdrawal
 * @param unknownBecause why the router could not be asked, naming the router Pod where one is to blame; empty when it
 *     answered
 */
public record RouterView(Optional<Boolean> selects, Map<String, Double> dispatches, Optional<String> unknownBecause) {
    public RouterView(Optional<Boolean> selects, Map<String, Double> dispatches) {
        this(selects, dispatches, Optional.empty());
    }

    /** The router's answer cannot be known, for this reason. */
    public static RouterView unavailable(String why) {
        return new RouterView(Optional.empty(), Map.of(), Optional.of(why));
    }

    /**
     * What a router's replicas say together: each routes on its own view, so one that still selects speaks for the
     * router, and one that cannot tell, or none at all, leaves the router's answer unknown. Each replica counts its own
     * dispatches, so its counts are keyed by the replica's name ({@code <replica>/<member>}) and compared only with its
     * own; a replica that appears later has no earlier count, which the retirement reads as zero.
     *
     * @param replicas each router replica's name with its own view
     */
    public static RouterView allOf(Map<String, RouterView> replicas) {
        if (replicas.isEmpty()) {
            return unavailable("the router has no Pod to ask");
        }
        Optional<Map.Entry<String, RouterView>> unknown = replicas.entrySet().stream()
                .filter(r -> r.getValue().selects().isEmpty())
                .findFirst();
        if (unknown.isPresent()) {
            return unavailable("router Pod " + unknown.get().getKey() + " "
                    + unknown.get().getValue().unknownBecause().orElse("gave no answer that could be read"));
        }
        Map<String, Double> dispatches = new HashMap<>();
        replicas.forEach((replica, view) ->
                view.dispatches().forEach((member, count) -> dispatches.put(replica + "/" + member, count)));
        return new RouterView(
                Optional.of(replicas.values().stream().anyMatch(r -> r.selects().get())), Map.copyOf(dispatches));
    }
}
