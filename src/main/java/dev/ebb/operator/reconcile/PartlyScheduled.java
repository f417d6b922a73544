package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Replicas of several Pods of which some are placed on nodes, holding their accelerators, while the scheduler finds no
 * room for the rest: such a replica serves nothing until every member is placed, and what its placed members hold is
 * lost to every other workload meanwhile. The default scheduler places Pods one at a time; only a gang scheduler
 * places a replica whole. Pure: what the Pods say, told as one notice per replica and set of waiting members.
 */
final class PartlyScheduled {
    static final String REASON = "ReplicaPartlyScheduled";
    /** What the scheduler said is shown up to this long, on one line: it comes from outside. */
    private static final int MAX_SCHEDULER_MESSAGE = 240;

    private PartlyScheduled() {}

    /**
     * @param key the waiting members' uids: the notice is told again only when they change
     * @param members every member of the replica, placed or not
     * @param since when the replica became partly placed, by the Pods' PodScheduled conditions; empty when they do not
     *     say, and such a replica is never released, since how long it has held its nodes is unknown
     * @param anyReady whether a member is ready, and so may carry requests: such a replica is never released, whatever
     *     it waits for. A multi-node engine's leader is ready only once every rank has joined, so a partly placed
     *     replica normally has none; every member carries the serving label from its creation, so that says nothing
     */
    record Replica(
            String role,
            int ordinal,
            List<String> placed,
            List<String> waiting,
            String schedulerSays,
            String key,
            List<Pod> members,
            Optional<Instant> since,
            boolean anyReady) {
        String message() {
            return "replica " + ordinal + " of role " + role + " is partly scheduled: " + String.join(", ", placed)
                    + " hold their nodes' accelerators while " + String.join(", ", waiting) + " cannot be placed ("
                    + schedulerSays
                    + "); the replica serves nothing until every member is placed. A gang scheduler places a replica whole";
        }
    }

    /**
     * A replica to delete whole, since it has held its placed members longer than its role allows.
     *
     * @param bound the role's bound, which is also how long its Pods are then held back from the scheduler
     */
    record Release(Replica replica, Duration held, Duration bound) {
        String message() {
            return "replica " + replica.ordinal() + " of role " + replica.role() + " held "
                    + String.join(", ", replica.placed())
                    + " for " + held.toSeconds() + " s while " + String.join(", ", replica.waiting())
                    + " could not be placed; its Pods"
                    + " are deleted, giving those accelerators back, and created again held back from the scheduler for "
                    + bound.toSeconds() + " s";
        }
    }

    /**
     * @param lookAgainIn when the next of the replicas still within their bound reaches it: nothing else would bring a
     *     pass then
     */
    record Verdict(List<Release> release, Optional<Duration> lookAgainIn) {}

    /**
     * The partly placed replicas whose hold has lasted their role's bound ({@code boundByRole}; a role not in it is
     * left alone). A replica whose start cannot be read, or of which a member is ready, is never released; nor is one
     * still held back after a release ({@code releasedUntil}, by {@link HeldBack#replicaKey}): its Pods created since
     * are gated and cannot be placed, so what still looks placed is the released Pods, their deletion not yet seen.
     */
    static Verdict due(
            List<Replica> replicas,
            Map<String, Duration> boundByRole,
            Map<String, Instant> releasedUntil,
            Instant now) {
        List<Release> release = new ArrayList<>();
        Optional<Duration> soonest = Optional.empty();
        for (Replica replica : replicas) {
            Duration bound = boundByRole.get(replica.role());
            boolean justReleased = Optional.ofNullable(
                            releasedUntil.get(HeldBack.replicaKey(replica.role(), replica.ordinal())))
                    .filter(until -> until.isAfter(now))
                    .isPresent();
            if (bound == null
                    || justReleased
                    || replica.anyReady()
                    || replica.since().isEmpty()) {
                continue;
            }
            Duration held = Duration.between(replica.since().get(), now);
            if (held.compareTo(bound) >= 0) {
                release.add(new Release(replica, held, bound));
            } else {
                Duration left = bound.minus(held);
                soonest = soonest.filter(s -> s.compareTo(left) <= 0).or(() -> Optional.of(left));
            }
        }
        return new Verdict(List.copyOf(release), soonest);
    }

    static List<Replica> among(Collection<Pod> pods) {
        Map<String, List<Pod>> byReplica = pods.stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> PodFacts.label(p, Labels.ROLE).isPresent()
                        && PodFacts.ordinal(p).isPresent())
                .collect(Collectors.groupingBy(
                        p -> PodFacts.label(p, Labels.ROLE).orElseThrow() + "/"
                                + PodFacts.ordinal(p).orElseThrow(),
                        TreeMap::new,
                        Collectors.toList()));
        return byReplica.values().stream()
                .map(PartlyScheduled::of)
                .flatMap(Optional::stream)
                .toList();
    }

    private static Optional<Replica> of(List<Pod> members) {
        List<Pod> sorted = members.stream()
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .toList();
        List<Pod> placed = sorted.stream()
                .filter(p -> p.getSpec() != null && p.getSpec().getNodeName() != null)
                .toList();
        List<Pod> waiting =
                sorted.stream().filter(p -> unschedulable(p).isPresent()).toList();
        if (placed.isEmpty() || waiting.isEmpty()) {
            return Optional.empty();
        }
        Pod first = waiting.get(0);
        String says = Optional.ofNullable(unschedulable(first).orElseThrow().getMessage())
                .map(PartlyScheduled::oneLine)
                .orElse("no reason given");
        Optional<Instant> placedSince = earliest(placed.stream().map(p -> scheduledCondition(p, "True")));
        Optional<Instant> waitingSince = earliest(waiting.stream().map(p -> unschedulable(p)));
        Optional<Instant> since = placedSince.flatMap(a -> waitingSince.map(b -> a.isAfter(b) ? a : b));
        boolean anyReady = sorted.stream().anyMatch(PodFacts::isReady);
        return Optional.of(new Replica(
                PodFacts.label(first, Labels.ROLE).orElseThrow(),
                PodFacts.ordinal(first).orElseThrow(),
                placed.stream()
                        .map(p ->
                                p.getMetadata().getName() + " on " + p.getSpec().getNodeName())
                        .toList(),
                waiting.stream().map(p -> p.getMetadata().getName()).toList(),
                says,
                waiting.stream()
                        .map(p -> String.valueOf(p.getMetadata().getUid()))
                        .collect(Collectors.joining(",")),
                sorted,
                since,
                anyReady));
    }

    /**
     * The earliest of the conditions' transition times; empty when any is missing or unreadable, so that a time
     * nobody wrote down never counts as long ago.
     */
    private static Optional<Instant> earliest(Stream<Optional<PodCondition>> conditions) {
        List<Optional<Instant>> times = conditions
                .map(c -> c.flatMap(condition -> PodFacts.time(condition.getLastTransitionTime())))
                .toList();
        if (times.isEmpty() || times.stream().anyMatch(Optional::isEmpty)) {
            return Optional.empty();
        }
        return times.stream().map(Optional::get).min(Comparator.naturalOrder());
    }

    /** The Pod's PodScheduled condition, when it has the status given. */
    private static Optional<PodCondition> scheduledCondition(Pod pod, String status) {
        return pod.getStatus() == null || pod.getStatus().getConditions() == null
                ? Optional.empty()
                : pod.getStatus().getConditions().stream()
                        .filter(c -> "PodScheduled".equals(c.getType()) && status.equals(c.getStatus()))
                        .findFirst();
    }

    /** The Pod's PodScheduled condition, when the scheduler found no node for it. */
    static Optional<PodCondition> unschedulable(Pod pod) {
        boolean bound = pod.getSpec() != null && pod.getSpec().getNodeName() != null;
        return bound
                ? Optional.empty()
                : scheduledCondition(pod, "False").filter(c -> "Unschedulable".equals(c.getReason()));
    }

    private static String oneLine(String text) {
        String line = text.replaceAll("[\\p{Cntrl}\\s]+", " ").strip();
        return line.length() > MAX_SCHEDULER_MESSAGE ? line.substring(0, MAX_SCHEDULER_MESSAGE) + "…" : line;
    }
}
