package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.retire.Classification;
import dev.ebb.operator.retire.ReplicaClassifier;
import io.fabric8.kubernetes.api.model.Pod;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The one read of each surplus candidate that decides which replica leaves. A pass starts the reads of every candidate
 * not read yet, all at once and each bounded like any member read; later passes collect them through the
 * {@link ReadLedger}. A round of readings serves one choice: it is dropped once retirements begin on it, and it
 * expires, so a choice never rests on an old picture of the load.
 */
@ApplicationScoped
public class CandidateReads {
    /** Well past a read's own bound: a read that has still not landed counts as unreadable instead of stalling the choice. */
    static final Duration ANSWER_LIMIT = Duration.ofSeconds(10);
    /** Readings older than this no longer say which replica is idlest now. */
    static final Duration ROUND_LIFETIME = Duration.ofSeconds(30);

    public static final String REASON_CHOOSING = "ChoosingReplica";

    /** What a pass that had to wait for reads reports. */
    public record Waiting(boolean tellNow, String message) {}

    private static final class Round {
        private final Instant startedAt;
        private final ReadLedger.Operation operation;
        /** Per member read, the uid of the Pod it was read from, so a Pod recreated under the name is never taken for it. */
        private final Map<String, String> started = new ConcurrentHashMap<>();

        private final Map<String, Reading> landed = new ConcurrentHashMap<>();
        private int passesWaited;

        Round(String deployment, Instant startedAt) {
            this.startedAt = startedAt;
            // its own operation in the ledger, so no read of a retirement is ever taken for a candidate's, or the
            // reverse
            this.operation = new ReadLedger.Operation(deployment, "choice@" + startedAt);
        }
    }

    private final ReadLedger ledger;
    private final Map<String, Round> rounds = new ConcurrentHashMap<>();

    public CandidateReads(ReadLedger ledger) {
        this.ledger = ledger;
    }

    /** Per role and ordinal, what the current round established for each replica it could decide about. */
    public Map<String, Map<Integer, Reading>> readings(ModelDeployment md, Inventory inventory, Instant now) {
        String deployment = md.getMetadata().getUid();
        Round round = rounds.get(deployment);
        if (round == null) {
            return Map.of();
        }
        if (now.isAfter(round.startedAt.plus(ROUND_LIFETIME))) {
            forget(deployment);
            return Map.of();
        }
        ledger.collect(round.operation).forEach((member, work) -> round.landed.put(member, work.gauges()));
        boolean overdue = now.isAfter(round.startedAt.plus(ANSWER_LIMIT));
        Map<String, Map<Integer, Reading>> readings = new HashMap<>();
        inventory
                .byRole()
                .forEach((role, replicas) -> replicas.values()
                        .forEach(replica -> reading(round, replica, overdue)
                                .ifPresent(reading -> readings.computeIfAbsent(role, r -> new HashMap<>())
                                        .put(replica.ordinal(), reading))));
        return readings;
    }

    private static Optional<Reading> reading(Round round, ObservedReplica replica, boolean overdue) {
        Classification classification = ReplicaClassifier.classify(replica.members());
        if (classification instanceof Classification.Unreachable) {
            // what is left of it takes no requests: it holds nothing, so it is as idle as a replica can be
            return Optional.of(new Reading.Idle());
        }
        if (!(classification instanceof Classification.Answerable answerable)) {
            // nothing it says can be read, so waiting would not help; it is simply chosen last
            return Optional.of(new Reading.Failed("no member can answer for the replica"));
        }
        List<Reading> found = new ArrayList<>();
        for (String member : answerable.answering()) {
            Optional<String> uid = replica.members().stream()
                    .filter(p -> member.equals(p.getMetadata().getName()))
                    .map(p -> p.getMetadata().getUid())
                    .findFirst();
            String readFrom = round.started.get(member);
            if (readFrom == null) {
                return Optional.empty();
            }
            if (!uid.filter(readFrom::equals).isPresent()) {
                return Optional.of(new Reading.Failed(member + " was replaced after it was read"));
            }
            Reading landed = round.landed.get(member);
            if (landed == null) {
                return overdue
                        ? Optional.of(new Reading.Failed(
                                member + " did not answer within " + ANSWER_LIMIT.toSeconds() + " s"))
                        : Optional.empty();
            }
            found.add(landed);
        }
        return Optional.of(LeavingOrder.combined(found));
    }

    /** Starts the reads of the candidates not read yet in this round; says when the wait is worth telling about. */
    public Waiting start(ModelDeployment md, List<ObservedReplica> awaiting, Instant now) {
        Round round = rounds.computeIfAbsent(md.getMetadata().getUid(), deployment -> new Round(deployment, now));
        for (ObservedReplica replica : awaiting) {
            if (ReplicaClassifier.classify(replica.members()) instanceof Classification.Answerable answerable) {
                for (Pod member : replica.members()) {
                    String name = member.getMetadata().getName();
                    if (answerable.answering().contains(name)
                            && round.started.putIfAbsent(
                                            name, member.getMetadata().getUid())
                                    == null) {
                        // only the gauges: the in-flight sum is what ranks them
                        ledger.start(round.operation, member, answerable.engine(), Optional.empty());
                    }
                }
            }
        }
        round.passesWaited++;
        String roles = awaiting.stream()
                .collect(Collectors.groupingBy(ObservedReplica::role, Collectors.counting()))
                .entrySet()
                .stream()
                .sorted(Map.Entry.comparingByKey())
                .map(e -> e.getValue() + " of role " + e.getKey())
                .collect(Collectors.joining(", "));
        // the first pass starts the reads and a quick answer needs no word; a second pass still waiting is told once
        return new Waiting(
                round.passesWaited == 2,
                "choosing which replica leaves: waiting for one read of " + roles
                        + "; the one with the fewest requests in flight goes first");
    }

    /** The round's choice was made, or the deployment is gone: its readings no longer decide anything. */
    public void forget(String deployment) {
        Round round = rounds.remove(deployment);
        if (round != null) {
            ledger.forget(round.operation);
        }
    }
}
