package dev.ebb.operator.retire;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which retirement a deployment works on this pass: the one in progress, a new one, a retry of an aborted one, or
 * none. One operation at a time per deployment; a replica whose retirement aborted is held back on its own (a refusal
 * until the user asks again, anything else until its cool-down), and the next candidate goes meanwhile. Pure.
 */
public final class NextRetirement {
    public static final String SCALE_DOWN = "ScaleDown";
    public static final String SURPLUS = "Surplus";
    public static final String ROLE_DROPPED = "RoleDropped";

    /**
     * A replica the spec takes away, in the order it should go.
     *
     * @param roleInSpec false when the spec dropped the whole role
     * @param chosenBecause why it leaves before the others, for status.retirement.chosenBecause
     */
    public record Candidate(String role, int ordinal, boolean roleInSpec, String chosenBecause) {
    }

    /** What the user and the operator's settings say about retrying an aborted operation. */
    public record RetryPolicy(Optional<String> requestedToken, Optional<String> usedToken, Duration coolDown) {
    }

    /**
     * A replica whose last retirement aborted, kept until it is retried.
     *
     * @param retryToken the retry annotation's value the aborted operation answered
     */
    public record Abort(String role, int ordinal, String reason, String message, Instant at, Optional<String> retryToken) {
        /** When the cool-down lets it be retried by itself; never for a refusal. */
        public Optional<Instant> retryAt(Duration coolDown) {
            return Reasons.refusal(reason) ? Optional.empty() : Optional.of(at.plus(coolDown));
        }

        static Abort of(Retirement aborted, Optional<String> retryToken) {
            return new Abort(aborted.role(), aborted.ordinal(), aborted.reason(), aborted.message(), aborted.phaseStartedAt(), retryToken);
        }
    }

    private record Replica(String role, int ordinal) {
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

    /** Every replica to take away is held back by its abort; the soonest cool-down ends at {@code retryAt}, if any. */
    public record Wait(Optional<Instant> retryAt) implements Decision {
    }

    /** Nothing to do, and no record to keep. */
    public record Nothing() implements Decision {
    }

    private NextRetirement() {
    }

    /**
     * @param record the operation status.retirement holds
     * @param earlier the aborts kept from before; the record's own abort, if it is one, replaces an earlier one of
     *     the same replica
     */
    public static Decision decide(Optional<Retirement> record, List<Abort> earlier, List<Candidate> candidates, RetryPolicy retry,
            Instant now) {
        if (record.isPresent() && !record.get().state().ended()) {
            Retirement current = record.get();
            boolean stillWanted = candidates.stream().anyMatch(c -> targets(current, c));
            return stillWanted || current.state().pastDeletion() ? new Advance(current) : new Cancel(current);
        }
        if (candidates.isEmpty()) {
            return new Nothing();
        }
        List<Abort> aborts = outstanding(record, retry.usedToken(), earlier, candidates);
        Optional<Instant> soonest = Optional.empty();
        for (Candidate candidate : candidates) {
            Optional<Abort> abort = aborts.stream().filter(a -> targets(a, candidate)).findFirst();
            if (abort.isEmpty()) {
                return new Begin(candidate, causeOf(candidate, false));
            }
            boolean askedAgain = retry.requestedToken().filter(token -> !Optional.of(token).equals(abort.get().retryToken())).isPresent();
            Optional<Instant> retryAt = abort.get().retryAt(retry.coolDown());
            if (askedAgain || retryAt.filter(at -> !now.isBefore(at)).isPresent()) {
                return new Begin(candidate, causeOf(candidate, true));
            }
            if (retryAt.isPresent() && soonest.filter(at -> at.isBefore(retryAt.get())).isEmpty()) {
                soonest = retryAt;
            }
        }
        return new Wait(soonest);
    }

    /**
     * The aborts to keep once this pass's record is written, one per replica: the record's own abort is the latest
     * of its replica, a record under way or completed ends its replica's abort, and a replica the spec no longer takes
     * away is held back by nothing.
     */
    public static List<Abort> outstanding(Optional<Retirement> record, Optional<String> recordToken, List<Abort> earlier,
            List<Candidate> candidates) {
        Map<Replica, Abort> byReplica = new HashMap<>();
        earlier.forEach(a -> byReplica.put(new Replica(a.role(), a.ordinal()), a));
        record.ifPresent(r -> {
            Replica replica = new Replica(r.role(), r.ordinal());
            if (r.state() == RetirementState.Aborted) {
                byReplica.put(replica, Abort.of(r, recordToken));
            } else {
                byReplica.remove(replica);
            }
        });
        return byReplica.values().stream().filter(a -> candidates.stream().anyMatch(c -> targets(a, c)))
                .sorted(Comparator.comparing(Abort::role).thenComparingInt(Abort::ordinal)).toList();
    }

    /**
     * Per role, the ordinals a retirement holds, under way or kept after an abort (a kept replica is still surplus):
     * they leave, and the planner puts nothing of them back. One given back because the spec wants it again is held by
     * nothing.
     */
    public static Map<String, Set<Integer>> held(Optional<Retirement> record, List<Abort> aborts) {
        Map<String, Set<Integer>> held = new HashMap<>();
        aborts.stream().filter(a -> !Reasons.NO_LONGER_WANTED.equals(a.reason()))
                .forEach(a -> held.computeIfAbsent(a.role(), r -> new HashSet<>()).add(a.ordinal()));
        record.filter(r -> r.state() != RetirementState.Completed && !Reasons.NO_LONGER_WANTED.equals(r.reason()))
                .ifPresent(r -> held.computeIfAbsent(r.role(), role -> new HashSet<>()).add(r.ordinal()));
        return held;
    }

    private static boolean targets(Retirement retirement, Candidate candidate) {
        return retirement.role().equals(candidate.role()) && retirement.ordinal() == candidate.ordinal();
    }

    private static boolean targets(Abort abort, Candidate candidate) {
        return abort.role().equals(candidate.role()) && abort.ordinal() == candidate.ordinal();
    }

    /** A replica kept after an aborted retirement is surplus: it is still there only because the protocol held it. */
    private static String causeOf(Candidate candidate, boolean retainedBefore) {
        if (!candidate.roleInSpec()) {
            return ROLE_DROPPED;
        }
        return retainedBefore ? SURPLUS : SCALE_DOWN;
    }
}
