package dev.ebb.operator.retire;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A withdrawal as one pass sees it, by named fields, for table rows. A row starts without a router, with every target
 * carrying serving=false, nothing known of the endpoints or the router and no dispatch counted, and says only what
 * differs: {@code withdrawal().routed().endpointsClear(true).routerSelects(false).dispatches(LEADER, 7)}.
 */
final class SeenWithdrawal {
    private final boolean routed;
    private final Set<String> stillServing;
    private final Optional<Boolean> endpointsClear;
    private final Optional<Boolean> routerSelects;
    private final Map<String, Double> dispatches;

    private SeenWithdrawal(
            boolean routed,
            Set<String> stillServing,
            Optional<Boolean> endpointsClear,
            Optional<Boolean> routerSelects,
            Map<String, Double> dispatches) {
        this.routed = routed;
        this.stillServing = Set.copyOf(stillServing);
        this.endpointsClear = endpointsClear;
        this.routerSelects = routerSelects;
        this.dispatches = Map.copyOf(dispatches);
    }

    static SeenWithdrawal withdrawal() {
        return new SeenWithdrawal(false, Set.of(), Optional.empty(), Optional.empty(), Map.of());
    }

    /** The deployment has a router. */
    SeenWithdrawal routed() {
        return new SeenWithdrawal(true, stillServing, endpointsClear, routerSelects, dispatches);
    }

    /** These members' serving label is anything but false. */
    SeenWithdrawal serving(Member... members) {
        return new SeenWithdrawal(
                routed,
                Arrays.stream(members).map(Member::name).collect(Collectors.toSet()),
                endpointsClear,
                routerSelects,
                dispatches);
    }

    /** Whether no EndpointSlice of the role lists a target member. */
    SeenWithdrawal endpointsClear(boolean clear) {
        return new SeenWithdrawal(routed, stillServing, Optional.of(clear), routerSelects, dispatches);
    }

    /** Whether the router still selects a target member. */
    SeenWithdrawal routerSelects(boolean selects) {
        return new SeenWithdrawal(routed, stillServing, endpointsClear, Optional.of(selects), dispatches);
    }

    /** The router's count of scheduling decisions for this member, besides those given before. */
    SeenWithdrawal dispatches(Member member, double count) {
        return dispatches(member.name(), count);
    }

    /** The router's count of scheduling decisions for the member of this name, besides those given before. */
    SeenWithdrawal dispatches(String member, double count) {
        Map<String, Double> counts = new HashMap<>(dispatches);
        counts.put(member, count);
        return new SeenWithdrawal(routed, stillServing, endpointsClear, routerSelects, counts);
    }

    /** The router's counts of scheduling decisions, per member, in place of those given before. */
    SeenWithdrawal dispatches(Map<String, Double> counts) {
        return new SeenWithdrawal(routed, stillServing, endpointsClear, routerSelects, counts);
    }

    Observation.Withdrawal get() {
        return new Observation.Withdrawal(routed, stillServing, endpointsClear, routerSelects, dispatches);
    }
}
