package dev.ebb.operator.retire;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The whole state of one retirement, everything an operator restart needs to resume it.
 *
 * @param targets every member bound at the start (the reservation); the deletion covers all of them
 * @param answering the members whose reads speak for the replica
 * @param standingHold a hold that comes from how the replica was deployed, which no read can lift
 * @param reads per answering member, its latest read and its run of idle reads
 * @param dispatchBaseline the router's count of scheduling decisions per target member, read before the withdrawal
 *     was written; empty until the router could be read, and the withdrawal is written only once it is present
 * @param drainBudget how long Draining may take, the role's setting when the retirement began
 */
public record Retirement(
        String role,
        int ordinal,
        String cause,
        List<Member> targets,
        List<String> answering,
        Optional<Classification.Held> standingHold,
        RetirementState state,
        Reason reason,
        String message,
        Instant startedAt,
        Instant phaseStartedAt,
        Map<String, MemberReads> reads,
        Optional<Map<String, Double>> dispatchBaseline,
        Duration drainBudget) {

    /** The moment the operation as a whole gives up if it has not reached the deletion. */
    public Instant deadline() {
        return startedAt.plus(Budgets.whole(drainBudget));
    }

    Retirement with(
            RetirementState nextState,
            Reason nextReason,
            String nextMessage,
            Instant nextPhaseStart,
            Map<String, MemberReads> nextReads) {
        return new Retirement(
                role,
                ordinal,
                cause,
                targets,
                answering,
                standingHold,
                nextState,
                nextReason,
                nextMessage,
                startedAt,
                nextPhaseStart,
                Map.copyOf(nextReads),
                dispatchBaseline,
                drainBudget);
    }

    Retirement withBaseline(Map<String, Double> baseline, Reason nextReason, String nextMessage) {
        return new Retirement(
                role,
                ordinal,
                cause,
                targets,
                answering,
                standingHold,
                state,
                nextReason,
                nextMessage,
                startedAt,
                phaseStartedAt,
                reads,
                Optional.of(Map.copyOf(baseline)),
                drainBudget);
    }

    /** The same reservation bound to the members' current containers. */
    Retirement rebound(List<Member> nextTargets) {
        return new Retirement(
                role,
                ordinal,
                cause,
                List.copyOf(nextTargets),
                answering,
                standingHold,
                state,
                reason,
                message,
                startedAt,
                phaseStartedAt,
                reads,
                dispatchBaseline,
                drainBudget);
    }

    Retirement holding(Reason nextReason, String nextMessage, Map<String, MemberReads> nextReads) {
        return with(state, nextReason, nextMessage, phaseStartedAt, nextReads);
    }
}
