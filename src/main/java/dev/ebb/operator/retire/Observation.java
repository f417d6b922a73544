package dev.ebb.operator.retire;

import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.Reading;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the shell saw in one pass, handed to the machine as values.
 *
 * @param members the reserved members that still exist, by name: their uid and engine container's identity now
 * @param reads the reads of answering members taken in this pass, if any
 * @param connections the connection tables of answering members read in the same pass as their gauges; read only where
 *     clients reach the replica without a router
 * @param requests with the connection tables, the sum of each member's request counters on the same page as its gauges;
 *     a member whose counters could not be read has none
 */
public record Observation(
        Instant now,
        Map<String, Present> members,
        Withdrawal withdrawal,
        Map<String, Reading> reads,
        Map<String, ConnectionRead.Peers> connections,
        Map<String, Double> requests) {

    /** A pass that read no connection table. */
    public Observation(Instant now, Map<String, Present> members, Withdrawal withdrawal, Map<String, Reading> reads) {
        this(now, members, withdrawal, reads, Map.of(), Map.of());
    }

    /** A reserved member that still exists; one being deleted by someone else counts as lost. */
    public record Present(String uid, String containerId, boolean terminating) {
        public Present(String uid, String containerId) {
            this(uid, containerId, false);
        }
    }

    /**
     * Whether the target has left every path that could give it new work, as seen in this pass.
     *
     * @param routed the deployment has a router; without one, clients reach the members through the role's Service,
     *     and what proves them gone is the members' own connection tables
     * @param stillServing the target members present whose serving label is anything but false
     * @param endpointsClear whether no EndpointSlice of the role lists a target member; empty when no slice of the
     *     role's Service is known, which says nothing
     * @param routerSelects whether the router still selects a target member; empty when the router cannot be asked
     * @param dispatches the router's count of scheduling decisions per target member now, for routers that count them
     * @param routerUnknownBecause why the router could not be asked, when it could not
     */
    public record Withdrawal(
            boolean routed,
            Set<String> stillServing,
            Optional<Boolean> endpointsClear,
            Optional<Boolean> routerSelects,
            Map<String, Double> dispatches,
            Optional<String> routerUnknownBecause) {
        public Withdrawal(
                boolean routed,
                Set<String> stillServing,
                Optional<Boolean> endpointsClear,
                Optional<Boolean> routerSelects,
                Map<String, Double> dispatches) {
            this(routed, stillServing, endpointsClear, routerSelects, dispatches, Optional.empty());
        }
    }
}
