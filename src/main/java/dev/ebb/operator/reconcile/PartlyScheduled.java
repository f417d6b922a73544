package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

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

    private PartlyScheduled() {
    }

    /**
     * @param key the waiting members' uids: the notice is told again only when they change
     */
    record Replica(String role, int ordinal, List<String> placed, List<String> waiting, String schedulerSays, String key) {
        String message() {
            return "replica " + ordinal + " of role " + role + " is partly scheduled: " + String.join(", ", placed)
                    + " hold their nodes' accelerators while " + String.join(", ", waiting) + " cannot be placed (" + schedulerSays
                    + "); the replica serves nothing until every member is placed. A gang scheduler places a replica whole";
        }
    }

    static List<Replica> among(Collection<Pod> pods) {
        Map<String, List<Pod>> byReplica = pods.stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> PodFacts.label(p, Labels.ROLE).isPresent() && PodFacts.ordinal(p).isPresent())
                .collect(Collectors.groupingBy(p -> PodFacts.label(p, Labels.ROLE).orElseThrow() + "/" + PodFacts.ordinal(p).orElseThrow(),
                        TreeMap::new, Collectors.toList()));
        return byReplica.values().stream().map(PartlyScheduled::of).flatMap(Optional::stream).toList();
    }

    private static Optional<Replica> of(List<Pod> members) {
        List<Pod> sorted = members.stream().sorted(Comparator.comparing(p -> p.getMetadata().getName())).toList();
        List<Pod> placed = sorted.stream().filter(p -> p.getSpec() != null && p.getSpec().getNodeName() != null).toList();
        List<Pod> waiting = sorted.stream().filter(p -> unschedulable(p).isPresent()).toList();
        if (placed.isEmpty() || waiting.isEmpty()) {
            return Optional.empty();
        }
        Pod first = waiting.get(0);
        String says = Optional.ofNullable(unschedulable(first).orElseThrow().getMessage()).map(PartlyScheduled::oneLine).orElse("no reason given");
        return Optional.of(new Replica(PodFacts.label(first, Labels.ROLE).orElseThrow(), PodFacts.ordinal(first).orElseThrow(),
                placed.stream().map(p -> p.getMetadata().getName() + " on " + p.getSpec().getNodeName()).toList(),
                waiting.stream().map(p -> p.getMetadata().getName()).toList(), says,
                waiting.stream().map(p -> String.valueOf(p.getMetadata().getUid())).collect(Collectors.joining(","))));
    }

    /** The Pod's PodScheduled condition, when the scheduler found no node for it. */
    private static Optional<PodCondition> unschedulable(Pod pod) {
        if (pod.getSpec() != null && pod.getSpec().getNodeName() != null || pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        return pod.getStatus().getConditions().stream()
                .filter(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()) && "Unschedulable".equals(c.getReason()))
                .findFirst();
    }

    private static String oneLine(String text) {
        String line = text.replaceAll("[\\p{Cntrl}\\s]+", " ").strip();
        return line.length() > MAX_SCHEDULER_MESSAGE ? line.substring(0, MAX_SCHEDULER_MESSAGE) + "…" : line;
    }
}
