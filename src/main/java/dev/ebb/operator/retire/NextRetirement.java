package dev.ebb.operator.retire;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Which retirement a deployment works on this pass: the one in progress, a new one, a retry of an aborted one, or
 * none. One operation at a time per deployment. Pure.
 */
public final class NextRetirement {
    public static final String SCALE_DOWN = "ScaleDown";
    public static final String SURPLUS = "Surplus";
    public static final String ROLE_DROPPED = "RoleDropped";

    /**
     * A replica the spec takes away, in the order it should go.
     *
     * @param roleInSpec false when the spec dropped the whole role
     */
    public record Candidate(String role, int ordinal, boolean roleInSpec) {
    }

    /** What the user and the operator's settings say about retrying an aborted operation. */
    public record RetryPolicy(Optional<String> requestedToken, Optional<String> usedToken, Duration coolDown) {
    }

    public sealed interface Decision {
    }

    /** Step the operation in progress. */
    public record Advance(Retirement current) implements Decision {
    }

    /** The spec no longer takes the target away: give it back. */
    public record Cancel(Retirement current) implements Decision {
    }

    /** Start on this replica; {@code cause} is what status.retirement records. */
    public record Begin(Candidate candidate, String cause) implements Decision {
    }

    /** An aborted operation stays on record until it is retried, and nothing else starts. */
    public record Wait(Retirement aborted, Optional<Instant> retryAt) implements Decision {
    }

    /** Nothing to do, and no record to keep. */
    public record Nothing() implements Decision {
    }

    private NextRetirement() {
    }

    public static Decision decide(Optional<Retirement> record, List<Candidate> candidates, RetryPolicy retry, Instant now) {
        if (record.isPresent() && !record.get().state().ended()) {
            Retirement current = record.get();
            boolean stillWanted = candidates.stream().anyMatch(c -> targets(current, c));
            return stillWanted || current.state().pastDeletion() ? new Advance(current) : new Cancel(current);
        }
        if (candidates.isEmpty()) {
            return new Nothing();
        }
        Candidate first = candidates.get(0);
        if (record.isEmpty() || record.get().state() == RetirementState.Completed) {
            return new Begin(first, causeOf(first, false));
        }
        Retirement aborted = record.get();
        boolean askedAgain = retry.requestedToken().filter(token -> !Objects.equals(Optional.of(token), retry.usedToken())).isPresent();
        boolean sameTarget = targets(aborted, first);
        if (askedAgain) {
            return new Begin(first, causeOf(first, sameTarget));
        }
        if (Reasons.refusal(aborted.reason())) {
            return new Wait(aborted, Optional.empty());
        }
        Instant retryAt = aborted.phaseStartedAt().plus(retry.coolDown());
        if (!now.isBefore(retryAt)) {
            return new Begin(first, causeOf(first, sameTarget));
        }
        return new Wait(aborted, Optional.of(retryAt));
    }

    /**
     * Per role, the ordinals a retirement holds, under way or kept after an abort (a kept replica is still surplus):
     * they leave, and the planner puts nothing of them back.
     */
    public static Map<String, Set<Integer>> held(Optional<Retirement> record) {
        return record.filter(r -> r.state() != RetirementState.Completed)
                .map(r -> Map.of(r.role(), Set.of(r.ordinal())))
                .orElse(Map.of());
    }

    private static boolean targets(Retirement retirement, Candidate candidate) {
        return retirement.role().equals(candidate.role()) && retirement.ordinal() == candidate.ordinal();
    }

    /** A replica kept after an aborted retirement is surplus: it is still there only because the protocol held it. */
    private static String causeOf(Candidate candidate, boolean retainedBefore) {
        if (!candidate.roleInSpec()) {
            return ROLE_DROPPED;
        }
        return retainedBefore ? SURPLUS : SCALE_DOWN;
    }
}
