package dev.ebb.operator.route;

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
}
