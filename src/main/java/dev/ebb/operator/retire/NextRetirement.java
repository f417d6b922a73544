package dev.ebb.operator.retire;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which retirements a deployment works on this pass: those in progress, and a new one for every replica to take away
 * that none holds yet, all at once (up to a configurable number). A replica whose retirement aborted is held back on
 * its own, never blocking another: a refusal until the user asks again, anything else until a cool-down that doubles
 * with each abort in a row. Three aborts in a row make the replica blocked, which status reports until the user asks
 * again or the spec changes; either retries it at once, counting afresh. Pure.
 */
public final class NextRetirement {
    public static final String SCALE_DOWN = "ScaleDown";
    public static final String SURPLUS = "Surplus";
    public static final String ROLE_DROPPED = "RoleDropped";
    public static final String ROLLOUT = "Rollout";
    public static final String NODE_MAINTENANCE = "NodeMaintenance";
    /** Aborts in a row after which status reports the replica as blocked. */
    public static final int BLOCKING_ABORTS = 3;
    /** The cool-down doubles with each abort in a row up to this. */
    public static final Duration LONGEST_COOL_DOWN = Duration.ofHours(1);

    /** Why a replica is to leave. */
    public enum Purpose {
        /** The role keeps fewer replicas than it has. */
        REDUCTION,
        /** The spec dropped the whole role. */
        ROLE_DROPPED,
        /** A rollout replaces it; its replacement comes at the role's new configuration. */
        ROLLOUT,
        /** Its node is going away (cordoned, or marked for removal); its replacement comes on another node. */
        NODE_MAINTENANCE
    }

    /**
     * Whether a retirement of this cause replaces its replica rather than reduces the role: one at a time, its replica
     * counting as the role's until it is gone, and never held back after an abort.
     */
    public static boolean replaces(String cause) {
        return ROLLOUT.equals(cause) || NODE_MAINTENANCE.equals(cause);
    }

    /** One replica of one role. */
    public record Replica(String role, int ordinal) {}

    /**
     * A replica to take away now, in the order it should go.
     *
     * @param chosenBecause why it leaves before the others, for status.retirements[].chosenBecause
     * @param drainBudget how long its retirement may spend proving it idle: its role's setting
     * @param memberTerminating whether a member of it is being deleted by someone else: no retirement of it begins
     *     until that member is gone, since the one it reserved would be lost at once
     */
    public record Candidate(
            String role,
            int ordinal,
            Purpose purpose,
            String chosenBecause,
            Duration drainBudget,
            boolean memberTerminating) {
        Replica replica() {
            return new Replica(role, ordinal);
        }
    }

    /**
     * What the user and the operator's settings say about retrying an aborted operation and running several.
     *
     * @param generation the spec's generation now: a blocked replica is retried once it changes
     * @param maxConcurrent how many retirements may run at once per deployment; 0 for as many as there are candidates
     */
    public record RetryPolicy(Optional<String> requestedToken, Duration coolDown, long generation, int maxConcurrent) {}

    /**
     * A replica whose last retirement aborted, kept until it is retried.
     *
     * @param retryToken the retry annotation's value the aborted operation answered
     * @param attempts aborts of this replica in a row
     * @param generation the spec's generation when it last aborted
     */
    public record Abort(
            String role,
            int ordinal,
            String cause,
            Reason reason,
            String message,
            Instant at,
            Optional<String> retryToken,
            int attempts,
            long generation) {
        /** Reported as blocked, and retried at once, counting afresh, when the spec changes. */
        public boolean blocked() {
            return !reason.refusal() && !changedUnderneath() && attempts >= BLOCKING_ABORTS;
        }

        /**
         * Someone else deleted a member: that says nothing about whether the rest can be proven idle, and the replica is
         * now another one, so it is retried at once, counting afresh, rather than after a cool-down.
         */
        boolean changedUnderneath() {
            return reason == Reason.TERMINATED_OUTSIDE;
        }

        /** When the cool-down lets it be retried by itself; never for a refusal. */
        public Optional<Instant> retryAt(Duration coolDown) {
            if (reason.refusal()) {
                return Optional.empty();
            }
            if (changedUnderneath()) {
                return Optional.of(at);
            }
            Duration wait = coolDown;
            for (int i = 1; i < attempts && wait.compareTo(LONGEST_COOL_DOWN) < 0; i++) {
                wait = wait.multipliedBy(2);
            }
            return Optional.of(at.plus(wait.compareTo(LONGEST_COOL_DOWN) < 0 ? wait : LONGEST_COOL_DOWN));
        }

        Replica replica() {
            return new Replica(role, ordinal);
        }

        static Abort of(RetirementRecord aborted, long generation) {
            Retirement r = aborted.retirement();
            return new Abort(
                    r.role(),
                    r.ordinal(),
                    r.cause(),
                    r.reason(),
                    r.message(),
                    r.phaseStartedAt(),
                    aborted.retryToken(),
                    aborted.attempt(),
                    generation);
        }
    }

    /** Step an operation in progress. */
    public record Advance(RetirementRecord current) {}

    /** The spec no longer takes the target away: give it back. */
    public record Cancel(RetirementRecord current) {}

    /**
     * Start on this replica; {@code cause} is what its record says.
     *
     * @param attempt how many retirements of it ran in a row, this one included
     */
    public record Begin(Candidate candidate, String cause, int attempt) {}

    /**
     * What to do this pass.
     *
     * @param keptAborted records of aborts whose replica is still to leave and not retried now: they stay on record
     * @param soonestRetry when the first replica held back by its cool-down may be retried, if any is
     */
    public record Plan(
            List<Advance> advance,
            List<Cancel> cancel,
            List<Begin> begin,
            List<RetirementRecord> keptAborted,
            Optional<Instant> soonestRetry) {}

    private NextRetirement() {}

    /**
     * @param records the operations status.retirements[] holds
     * @param earlier the aborts kept from before
     * @param candidates the replicas to take away now, in the order they go
     * @param later replicas to take away in a later pass (a rollout's next ones): their aborts are kept too
     */
    public static Plan decide(
            List<RetirementRecord> records,
            List<Abort> earlier,
            List<Candidate> candidates,
            Collection<Replica> later,
            RetryPolicy retry,
            Instant now) {
        List<Advance> advance = new ArrayList<>();
        List<Cancel> cancel = new ArrayList<>();
        Set<Replica> underWay = new HashSet<>();
        for (RetirementRecord record : records) {
            if (!record.underWay()) {
                continue;
            }
            Retirement r = record.retirement();
            underWay.add(new Replica(r.role(), r.ordinal()));
            boolean stillWanted = candidates.stream().anyMatch(c -> record.targets(c.role(), c.ordinal()));
            if (stillWanted || r.state().pastDeletion()) {
                advance.add(new Advance(record));
            } else {
                cancel.add(new Cancel(record));
            }
        }
        Map<Replica, Abort> aborts = new HashMap<>();
        outstanding(records, earlier, candidates, later, retry.generation()).forEach(a -> aborts.put(a.replica(), a));
        int slots =
                retry.maxConcurrent() <= 0 ? Integer.MAX_VALUE : Math.max(0, retry.maxConcurrent() - advance.size());
        List<Begin> begin = new ArrayList<>();
        Optional<Instant> soonest = Optional.empty();
        for (Candidate candidate : candidates) {
            if (underWay.contains(candidate.replica()) || candidate.memberTerminating() || begin.size() >= slots) {
                continue;
            }
            Abort abort = aborts.get(candidate.replica());
            if (abort == null) {
                begin.add(new Begin(candidate, causeOf(candidate, false), 1));
                continue;
            }
            Optional<Integer> attempt = retryAttempt(abort, retry, now);
            Optional<Instant> retryAt = abort.retryAt(retry.coolDown());
            if (attempt.isPresent()) {
                begin.add(new Begin(candidate, causeOf(candidate, true), attempt.get()));
            } else if (retryAt.isPresent()
                    && soonest.filter(at -> at.isBefore(retryAt.get())).isEmpty()) {
                soonest = retryAt;
            }
        }
        Set<Replica> begun = new HashSet<>();
        begin.forEach(b -> begun.add(b.candidate().replica()));
        Set<Replica> leaving = leaving(candidates, later);
        List<RetirementRecord> keptAborted = records.stream()
                .filter(r -> r.retirement().state() == RetirementState.Aborted)
                .filter(r -> r.retirement().reason() != Reason.NO_LONGER_WANTED)
                .filter(r -> {
                    Replica replica =
                            new Replica(r.retirement().role(), r.retirement().ordinal());
                    return leaving.contains(replica) && !begun.contains(replica);
                })
                .toList();
        return new Plan(List.copyOf(advance), List.copyOf(cancel), List.copyOf(begin), keptAborted, soonest);
    }

    /**
     * The aborts to keep once this pass's records are written, one per replica: a record's own abort is the latest of
     * its replica, a record under way or completed ends its replica's abort, and a replica that is no longer to leave
     * is held back by nothing.
     */
    public static List<Abort> outstanding(
            List<RetirementRecord> records,
            List<Abort> earlier,
            List<Candidate> candidates,
            Collection<Replica> later,
            long generation) {
        Map<Replica, Abort> byReplica = new HashMap<>();
        earlier.forEach(a -> byReplica.put(a.replica(), a));
        for (RetirementRecord record : records) {
            Retirement r = record.retirement();
            Replica replica = new Replica(r.role(), r.ordinal());
            if (r.state() != RetirementState.Aborted) {
                byReplica.remove(replica);
            } else if (r.reason() != Reason.NO_LONGER_WANTED) {
                // the same abort read back on a later pass keeps the generation it was first recorded at
                Abort known = byReplica.get(replica);
                if (known == null || !known.at().equals(r.phaseStartedAt())) {
                    byReplica.put(replica, Abort.of(record, generation));
                }
            }
        }
        Set<Replica> leaving = leaving(candidates, later);
        return byReplica.values().stream()
                .filter(a -> leaving.contains(a.replica()))
                .sorted(Comparator.comparing(Abort::role).thenComparingInt(Abort::ordinal))
                .toList();
    }

    /**
     * Per role, the ordinals a reduction holds, under way or kept after an abort (a kept replica is still surplus):
     * they leave, and the planner puts nothing of them back. One given back because the spec wants it again is held by
     * nothing, and a rollout's holds nothing back: its replica counts as the role's until it is gone.
     */
    public static Map<String, Set<Integer>> held(List<RetirementRecord> records, List<Abort> aborts) {
        Map<String, Set<Integer>> held = new HashMap<>();
        aborts.stream()
                .filter(a -> !replaces(a.cause()))
                .forEach(a ->
                        held.computeIfAbsent(a.role(), r -> new HashSet<>()).add(a.ordinal()));
        records.stream()
                .map(RetirementRecord::retirement)
                .filter(r -> r.state() != RetirementState.Completed && !replaces(r.cause()))
                .filter(r -> r.reason() != Reason.NO_LONGER_WANTED)
                .forEach(r ->
                        held.computeIfAbsent(r.role(), role -> new HashSet<>()).add(r.ordinal()));
        return held;
    }

    /** Per role, the ordinals a rollout or a move off a node is retiring now. */
    public static Map<String, Set<Integer>> rollingOut(List<RetirementRecord> records) {
        Map<String, Set<Integer>> rolling = new HashMap<>();
        records.stream()
                .filter(RetirementRecord::underWay)
                .map(RetirementRecord::retirement)
                .filter(r -> replaces(r.cause()))
                .forEach(r -> rolling.computeIfAbsent(r.role(), role -> new HashSet<>())
                        .add(r.ordinal()));
        return rolling;
    }

    /** Per role, the ordinals a rollout must pass over for now: their last retirement aborted and may not be retried yet. */
    public static Map<String, Set<Integer>> rolloutWaiting(List<Abort> aborts, RetryPolicy retry, Instant now) {
        Map<String, Set<Integer>> waiting = new HashMap<>();
        aborts.stream()
                .filter(a -> replaces(a.cause()))
                .filter(a -> retryAttempt(a, retry, now).isEmpty())
                .forEach(a -> waiting.computeIfAbsent(a.role(), role -> new HashSet<>())
                        .add(a.ordinal()));
        return waiting;
    }

    /**
     * The attempt a retry of this replica would be, if it may be retried now: a fresh count on the user's word or, once
     * blocked, on a spec change; the next in the row once its cool-down is over.
     */
    private static Optional<Integer> retryAttempt(Abort abort, RetryPolicy retry, Instant now) {
        boolean askedAgain = retry.requestedToken()
                .filter(token -> !Optional.of(token).equals(abort.retryToken()))
                .isPresent();
        boolean unblocked = abort.blocked() && abort.generation() != retry.generation();
        if (askedAgain || unblocked || abort.changedUnderneath()) {
            return Optional.of(1);
        }
        return abort.retryAt(retry.coolDown()).filter(at -> !now.isBefore(at)).map(at -> abort.attempts() + 1);
    }

    private static Set<Replica> leaving(List<Candidate> candidates, Collection<Replica> later) {
        Set<Replica> leaving = new HashSet<>(later);
        candidates.forEach(c -> leaving.add(c.replica()));
        return leaving;
    }

    /** A replica kept after an aborted reduction is surplus: it is still there only because the protocol held it. */
    private static String causeOf(Candidate candidate, boolean retainedBefore) {
        return switch (candidate.purpose()) {
            case ROLE_DROPPED -> ROLE_DROPPED;
            case ROLLOUT -> ROLLOUT;
            case NODE_MAINTENANCE -> NODE_MAINTENANCE;
            case REDUCTION -> retainedBefore ? SURPLUS : SCALE_DOWN;
        };
    }
}
