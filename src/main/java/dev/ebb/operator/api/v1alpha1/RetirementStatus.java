package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/**
 * One retirement in progress, or one that aborted while its replica is still to leave: everything an operator restart
 * needs to resume it. Times are RFC 3339. {@code attempt} counts the retirements of this replica in a row, this one
 * included; {@code drainSeconds} is the draining budget it started with. {@code retryToken} is the value of the retry annotation this operation answered, so that the
 * same value never starts a second one. {@code dispatchBaseline} is what the router counted for each target member
 * before the withdrawal; absent when it could not be read then. {@code chosenBecause} says why this replica left before
 * the others, with the readings the choice rested on.
 */
public record RetirementStatus(
        String roleName,
        Integer replicaOrdinal,
        String cause,

        @Size(max = RetirementStatus.MAX_CHOSEN_BECAUSE)
        @JsonPropertyDescription(
                "Why this replica was chosen to leave before the others, with the readings behind the choice.")
        String chosenBecause,

        List<TargetMember> targetMembers,
        List<String> answering,
        String state,
        String reason,
        String message,
        String holdReason,
        String holdMessage,
        String startedAt,
        String phaseStartedAt,
        String deadline,
        List<MemberRead> reads,
        List<DispatchCount> dispatchBaseline,
        String retryToken,
        Integer attempt,
        Integer drainSeconds) {
    public static final int MAX_CHOSEN_BECAUSE = 256;

    /** A member bound at the start: the deletion covers exactly these, each only with this uid. */
    public record TargetMember(String name, String uid, String containerID) {}

    /** The router's count of scheduling decisions for one target member. */
    public record DispatchCount(String member, Double count) {}

    /**
     * The latest read of one answering member. Without a router, {@code quietRequests} is what its request counters
     * have stood at since {@code quietSince}, while its gauges read idle; both absent while that is not known.
     */
    public record MemberRead(
            String member,
            String verdict,
            Double inFlight,
            Integer consecutiveIdle,
            String time,
            Double quietRequests,
            String quietSince) {
        public MemberRead(String member, String verdict, Double inFlight, Integer consecutiveIdle, String time) {
            this(member, verdict, inFlight, consecutiveIdle, time, null, null);
        }
    }
}
