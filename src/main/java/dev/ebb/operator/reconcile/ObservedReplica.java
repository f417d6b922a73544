package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The Pods that exist for one replica ordinal of one role, as the API server reports them. */
public record ObservedReplica(String role, int ordinal, List<Pod> members) {

    /** The hash the members were created at; empty when they disagree, since then no single config describes them. */
    public Optional<String> configHash() {
        List<String> hashes = members.stream()
                .map(p -> p.getMetadata().getLabels().get(Labels.CONFIG_HASH))
                .distinct()
                .toList();
        return hashes.size() == 1 ? Optional.ofNullable(hashes.get(0)) : Optional.empty();
    }

    /** The size the replica was created with, when every member records the same valid one. */
    public Optional<Integer> createdSize() {
        List<String> sizes = members.stream()
                .map(p -> annotation(p, Annotations.REPLICA_SIZE))
                .distinct()
                .toList();
        if (sizes.size() != 1 || sizes.get(0) == null) {
            return Optional.empty();
        }
        return PodFacts.parseBoundedInt(sizes.get(0), 1, Integer.MAX_VALUE);
    }

    public boolean complete() {
        return createdSize().map(size -> size == members.size()).orElse(false);
    }

    public boolean ready() {
        return complete() && members.stream().allMatch(PodFacts::isReady);
    }

    /** Whether any container of the replica ever started: one that never did cannot hold a request. */
    public boolean everRan() {
        return members.stream().anyMatch(PodFacts::everStarted);
    }

    /** Not Ready because something that ran stopped working (a container restarted, a Pod failed), not because it is starting. */
    public boolean failing() {
        return !ready() && !terminating() && members.stream().anyMatch(PodFacts::failedAfterRunning);
    }

    /** Whether a member is on its way out: the replica is going, and nothing of it is put back meanwhile. */
    public boolean terminating() {
        return members.stream().anyMatch(p -> p.getMetadata().getDeletionTimestamp() != null);
    }

    /** Whether the scheduler found no node for one of its members. */
    public boolean unplaceable() {
        return members.stream().anyMatch(p -> PartlyScheduled.unschedulable(p).isPresent());
    }

    public boolean hasMember(int index) {
        return members.stream()
                .anyMatch(p -> PodFacts.memberIndex(p).filter(i -> i == index).isPresent());
    }

    private static String annotation(Pod pod, String key) {
        return pod.getMetadata().getAnnotations() == null
                ? null
                : pod.getMetadata().getAnnotations().get(key);
    }

    public ObservedReplica {
        Objects.requireNonNull(role);
        members = List.copyOf(members);
    }
}
