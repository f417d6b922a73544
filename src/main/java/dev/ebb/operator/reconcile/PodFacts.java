package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Optional;

/** Reads what the operator needs from a Pod, treating every label as untrusted text. */
final class PodFacts {
    /** An RFC 3339 time as the API server writes it is 20 characters, 35 with nanoseconds and an offset. */
    private static final int MAX_TIMESTAMP = 40;

    private PodFacts() {}

    static Optional<Integer> ordinal(Pod pod) {
        return label(pod, Labels.REPLICA).flatMap(v -> parseBoundedInt(v, 0, Integer.MAX_VALUE));
    }

    static Optional<Integer> memberIndex(Pod pod) {
        return label(pod, Labels.MEMBER_INDEX).flatMap(v -> parseBoundedInt(v, 0, Integer.MAX_VALUE));
    }

    static Optional<String> label(Pod pod, String key) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        return labels == null ? Optional.empty() : Optional.ofNullable(labels.get(key));
    }

    static boolean isReady(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null
                && pod.getStatus() != null
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    static boolean everStarted(Pod pod) {
        return pod.getStatus() != null
                && pod.getStatus().getContainerStatuses() != null
                && pod.getStatus().getContainerStatuses().stream()
                        .anyMatch(c -> c.getContainerID() != null
                                        && !c.getContainerID().isEmpty()
                                || c.getRestartCount() != null && c.getRestartCount() > 0);
    }

    /** Whether a container of the Pod restarted, or the Pod failed: something that ran has stopped working. */
    static boolean failedAfterRunning(Pod pod) {
        if (pod.getStatus() == null) {
            return false;
        }
        boolean restarted = pod.getStatus().getContainerStatuses() != null
                && pod.getStatus().getContainerStatuses().stream()
                        .anyMatch(c -> c.getRestartCount() != null && c.getRestartCount() > 0);
        return restarted || "Failed".equals(pod.getStatus().getPhase());
    }

    /** An RFC 3339 time as a Pod carries it; empty when missing, oversized or unreadable. */
    static Optional<Instant> time(String text) {
        if (text == null || text.length() > MAX_TIMESTAMP) {
            return Optional.empty();
        }
        try {
            return Optional.of(Instant.parse(text));
        } catch (DateTimeParseException unreadable) {
            return Optional.empty();
        }
    }

    /** {@link Labels#number}, within these bounds. */
    static Optional<Integer> parseBoundedInt(String text, int min, int max) {
        return Labels.number(text).filter(value -> value >= min && value <= max);
    }
}
