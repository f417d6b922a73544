package dev.ebb.operator.route;

import java.util.Map;
import java.util.Optional;

/**
 * What a deployment's router says about a retirement's target members.
 *
 * @param selects whether the router still selects any of them; empty when the router could not be asked, which is
 *     never taken for "withdrawn"
 * @param dispatches the router's count of scheduling decisions so far per member, for routers that count them (none
 *     otherwise); the retirement compares them with the counts it read before the withdrawal
 */
public record RouterView(Optional<Boolean> selects, Map<String, Double> dispatches) {
    public static RouterView unavailable() {
        return new RouterView(Optional.empty(), Map.of());
    }
}
