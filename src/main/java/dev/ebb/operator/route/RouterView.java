package dev.ebb.operator.route;

import java.util.List;
import java.util.Optional;

/**
 * What a deployment's router says about a retirement's target members.
 *
 * @param selects whether the router still selects any of them; empty when the router could not be asked, which is
 *     never taken for "withdrawn"
 * @param dispatchedSince whether the router reported a dispatch to any of them since the withdrawal began
 */
public record RouterView(Optional<Boolean> selects, boolean dispatchedSince) {
    public static RouterView unavailable() {
        return new RouterView(Optional.empty(), false);
    }

    /**
     * What a router's replicas say together: each routes on its own view, so one that still selects or dispatched
     * speaks for the router, and one that cannot tell, or none at all, leaves the router's answer unknown.
     */
    public static RouterView allOf(List<RouterView> replicas) {
        if (replicas.isEmpty() || replicas.stream().anyMatch(r -> r.selects().isEmpty())) {
            return unavailable();
        }
        return new RouterView(Optional.of(replicas.stream().anyMatch(r -> r.selects().get())),
                replicas.stream().anyMatch(RouterView::dispatchedSince));
    }
}
