package dev.ebb.operator.retire;

import dev.ebb.operator.api.v1alpha1.AbortedRetirement;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** Writes retirements into status.retirements[] and reads them back, so that an operator restart resumes them. Pure. */
public final class RetirementRecords {
    private RetirementRecords() {}

    public static RetirementStatus toStatus(RetirementRecord record) {
        Retirement r = record.retirement();
        return new RetirementStatus(
                r.role(),
                r.ordinal(),
                r.cause(),
                record.chosenBecause(),
                r.targets().stream()
                        .map(m -> new RetirementStatus.TargetMember(m.name(), m.uid(), m.containerId()))
                        .toList(),
                r.answering(),
                r.state().name(),
                r.reason().wire(),
                r.message(),
                r.standingHold().map(h -> h.reason().wire()).orElse(null),
                r.standingHold().map(Classification.Held::message).orElse(null),
                r.startedAt().toString(),
                r.phaseStartedAt().toString(),
                r.deadline().toString(),
                r.reads().entrySet().stream()
                        .sorted(Map.Entry.comparingByKey())
                        .map(e -> new RetirementStatus.MemberRead(
                                e.getKey(),
                                e.getValue().verdict().wire(),
                                e.getValue().inFlight(),
                                e.getValue().consecutiveIdle(),
                                e.getValue().at() == null
                                        ? null
                                        : e.getValue().at().toString(),
                                e.getValue()
                                        .quiet()
                                        .map(MemberReads.Quiet::requests)
                                        .orElse(null),
                                e.getValue()
                                        .quiet()
                                        .map(q -> q.since().toString())
                                        .orElse(null)))
                        .toList(),
                r.dispatchBaseline()
                        .map(counts -> counts.entrySet().stream()
                                .sorted(Map.Entry.comparingByKey())
                                .map(e -> new RetirementStatus.DispatchCount(e.getKey(), e.getValue()))
                                .toList())
                        .orElse(null),
                record.retryToken().orElse(null),
                record.attempt(),
                (int) r.drainBudget().toSeconds());
    }

    /**
     * The retirements a status records that are whole and readable; each entry someone edited into nonsense is left
     * out, and the shell then treats that operation as lost rather than guess at it.
     */
    public static List<RetirementRecord> fromStatus(ModelDeploymentStatus status) {
        if (status == null || status.retirements() == null) {
            return List.of();
        }
        return status.retirements().stream()
                .flatMap(s -> fromStatus(s).stream())
                .toList();
    }

    /** One entry of status.retirements[], when it is whole and readable. */
    public static Optional<RetirementRecord> fromStatus(RetirementStatus s) {
        try {
            Map<String, MemberReads> reads = new LinkedHashMap<>();
            if (s.reads() != null) {
                for (RetirementStatus.MemberRead read : s.reads()) {
                    Optional<MemberReads.Quiet> quiet = quietOf(read, Instant.parse(s.phaseStartedAt()));
                    reads.put(
                            read.member(),
                            new MemberReads(
                                    verdict(read.verdict()),
                                    read.inFlight() == null ? 0 : read.inFlight(),
                                    read.consecutiveIdle() == null ? 0 : read.consecutiveIdle(),
                                    read.time() == null ? null : Instant.parse(read.time()),
                                    quiet));
                }
            }
            Optional<Map<String, Double>> baseline = Optional.empty();
            if (s.dispatchBaseline() != null) {
                Map<String, Double> counts = new LinkedHashMap<>();
                s.dispatchBaseline().forEach(c -> counts.put(require(c.member()), Objects.requireNonNull(c.count())));
                baseline = Optional.of(Map.copyOf(counts));
            }
            Optional<Classification.Held> hold = s.holdReason() == null
                    ? Optional.empty()
                    : Optional.of(new Classification.Held(reason(s.holdReason()), s.holdMessage()));
            // a record written before drain budgets were kept drains with the default
            Duration drainBudget = s.drainSeconds() == null ? Budgets.DRAINING : Duration.ofSeconds(s.drainSeconds());
            Retirement retirement = new Retirement(
                    require(s.roleName()),
                    s.replicaOrdinal(),
                    require(s.cause()),
                    s.targetMembers().stream()
                            .map(t -> new Member(require(t.name()), require(t.uid()), t.containerID()))
                            .toList(),
                    s.answering() == null ? List.of() : List.copyOf(s.answering()),
                    hold,
                    RetirementState.valueOf(s.state()),
                    reason(s.reason()),
                    s.message(),
                    Instant.parse(s.startedAt()),
                    Instant.parse(s.phaseStartedAt()),
                    Map.copyOf(reads),
                    baseline,
                    drainBudget);
            return Optional.of(new RetirementRecord(
                    retirement,
                    s.chosenBecause(),
                    Optional.ofNullable(s.retryToken()),
                    s.attempt() == null || s.attempt() < 1 ? 1 : s.attempt()));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * A quiet spell recorded only in part, with a count no counter holds, or said to start before the phase it was read
     * in is not believed: it starts again at the next read, so that an edit can only lengthen the wait for bystanders.
     */
    private static Optional<MemberReads.Quiet> quietOf(RetirementStatus.MemberRead read, Instant phaseStartedAt) {
        if (read.quietRequests() == null
                || read.quietSince() == null
                || !(read.quietRequests() >= 0)
                || read.quietRequests().isInfinite()) {
            return Optional.empty();
        }
        Instant since = Instant.parse(read.quietSince());
        return since.isBefore(phaseStartedAt)
                ? Optional.empty()
                : Optional.of(new MemberReads.Quiet(read.quietRequests(), since));
    }

    /** The aborts status.abortedRetirements keeps, with when each may be retried by itself. */
    public static List<AbortedRetirement> toStatus(List<NextRetirement.Abort> aborts, Duration coolDown) {
        return aborts.stream()
                .map(a -> new AbortedRetirement(
                        a.role(),
                        a.ordinal(),
                        a.cause(),
                        a.attempts(),
                        a.generation(),
                        a.reason().wire(),
                        a.message(),
                        a.at().toString(),
                        a.retryAt(coolDown).map(Instant::toString).orElse(null),
                        a.retryToken().orElse(null)))
                .toList();
    }

    /** The aborts a status keeps; an entry someone edited into nonsense is dropped, and its replica is simply retried. */
    public static List<NextRetirement.Abort> aborts(ModelDeploymentStatus status) {
        List<NextRetirement.Abort> aborts = new ArrayList<>();
        List<AbortedRetirement> entries =
                status == null || status.abortedRetirements() == null ? List.of() : status.abortedRetirements();
        for (AbortedRetirement entry : entries) {
            try {
                // an entry written before causes and counts were kept was a reduction's first abort
                aborts.add(new NextRetirement.Abort(
                        require(entry.roleName()),
                        entry.replicaOrdinal(),
                        entry.cause() == null ? NextRetirement.SCALE_DOWN : entry.cause(),
                        reason(entry.reason()),
                        entry.message(),
                        Instant.parse(entry.abortedAt()),
                        Optional.ofNullable(entry.retryToken()),
                        entry.attempts() == null || entry.attempts() < 1 ? 1 : entry.attempts(),
                        entry.generation() == null ? 0 : entry.generation()));
            } catch (RuntimeException e) {
                // nothing is deleted on the strength of this entry: its replica is proven idle again when retried
            }
        }
        return List.copyOf(aborts);
    }

    /** A reason no version of the protocol gives is an edit: the entry it is in is not believed. */
    private static Reason reason(String wire) {
        return Reason.fromWire(wire).orElseThrow(() -> new IllegalArgumentException("unknown reason " + wire));
    }

    /** A verdict no read or mark gives is an edit: the entry it is in is not believed. */
    private static MemberReads.Verdict verdict(String wire) {
        return MemberReads.Verdict.fromWire(wire)
                .orElseThrow(() -> new IllegalArgumentException("unknown verdict " + wire));
    }

    private static String require(String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing field");
        }
        return value;
    }
}
