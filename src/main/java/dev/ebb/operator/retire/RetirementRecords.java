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

/** Writes a retirement into status.retirement and reads it back, so that an operator restart resumes it. Pure. */
public final class RetirementRecords {
    private RetirementRecords() {
    }

    /** @param chosenBecause why the replica was chosen, kept as it was written when the retirement began */
    public static RetirementStatus toStatus(Retirement r, String chosenBecause, String retryToken) {
        return new RetirementStatus(
                r.role(), r.ordinal(), r.cause(), chosenBecause,
                r.targets().stream().map(m -> new RetirementStatus.TargetMember(m.name(), m.uid(), m.containerId())).toList(),
                r.answering(),
                r.state().name(), r.reason(), r.message(),
                r.standingHold().map(Classification.Held::reason).orElse(null),
                r.standingHold().map(Classification.Held::message).orElse(null),
                r.startedAt().toString(), r.phaseStartedAt().toString(), r.deadline().toString(),
                r.reads().entrySet().stream().sorted(Map.Entry.comparingByKey())
                        .map(e -> new RetirementStatus.MemberRead(e.getKey(), e.getValue().verdict(), e.getValue().inFlight(),
                                e.getValue().consecutiveIdle(), e.getValue().at() == null ? null : e.getValue().at().toString()))
                        .toList(),
                r.dispatchBaseline().map(counts -> counts.entrySet().stream().sorted(Map.Entry.comparingByKey())
                        .map(e -> new RetirementStatus.DispatchCount(e.getKey(), e.getValue())).toList()).orElse(null),
                retryToken);
    }

    /**
     * The retirement a status records, when the record is whole and readable. A record someone edited into
     * nonsense yields nothing: the shell then treats the operation as lost rather than guess at it.
     */
    public static Optional<Retirement> fromStatus(RetirementStatus s) {
        try {
            Map<String, MemberReads> reads = new LinkedHashMap<>();
            if (s.reads() != null) {
                for (RetirementStatus.MemberRead read : s.reads()) {
                    reads.put(read.member(), new MemberReads(read.verdict(), read.inFlight() == null ? 0 : read.inFlight(),
                            read.consecutiveIdle() == null ? 0 : read.consecutiveIdle(), read.time() == null ? null : Instant.parse(read.time())));
                }
            }
            Optional<Map<String, Double>> baseline = Optional.empty();
            if (s.dispatchBaseline() != null) {
                Map<String, Double> counts = new LinkedHashMap<>();
                s.dispatchBaseline().forEach(c -> counts.put(require(c.member()), Objects.requireNonNull(c.count())));
                baseline = Optional.of(Map.copyOf(counts));
            }
            Optional<Classification.Held> hold = s.holdReason() == null ? Optional.empty()
                    : Optional.of(new Classification.Held(s.holdReason(), s.holdMessage()));
            return Optional.of(new Retirement(
                    require(s.roleName()), s.replicaOrdinal(), require(s.cause()),
                    s.targetMembers().stream().map(t -> new Member(require(t.name()), require(t.uid()), t.containerID())).toList(),
                    s.answering() == null ? List.of() : List.copyOf(s.answering()),
                    hold, RetirementState.valueOf(s.state()), s.reason(), s.message(),
                    Instant.parse(s.startedAt()), Instant.parse(s.phaseStartedAt()), Map.copyOf(reads), baseline));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The aborts status.abortedRetirements keeps, with when each may be retried by itself. */
    public static List<AbortedRetirement> toStatus(List<NextRetirement.Abort> aborts, Duration coolDown) {
        return aborts.stream().map(a -> new AbortedRetirement(a.role(), a.ordinal(), a.reason(), a.message(), a.at().toString(),
                a.retryAt(coolDown).map(Instant::toString).orElse(null), a.retryToken().orElse(null))).toList();
    }

    /** The aborts a status keeps; an entry someone edited into nonsense is dropped, and its replica is simply retried. */
    public static List<NextRetirement.Abort> aborts(ModelDeploymentStatus status) {
        List<NextRetirement.Abort> aborts = new ArrayList<>();
        List<AbortedRetirement> entries = status == null || status.abortedRetirements() == null ? List.of() : status.abortedRetirements();
        for (AbortedRetirement entry : entries) {
            try {
                aborts.add(new NextRetirement.Abort(require(entry.roleName()), entry.replicaOrdinal(), require(entry.reason()),
                        entry.message(), Instant.parse(entry.abortedAt()), Optional.ofNullable(entry.retryToken())));
            } catch (RuntimeException e) {
                // nothing is deleted on the strength of this entry: its replica is proven idle again when retried
            }
        }
        return List.copyOf(aborts);
    }

    private static String require(String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing field");
        }
        return value;
    }
}
