package dev.ebb.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Pods deleted with less grace than their own (`kubectl delete --grace-period`, an eviction): the kubelet kills them by
 * the deletion's grace, while their drain hook, whose grace was fixed when the Pod was created, plans with the
 * longer one. Nothing can lengthen it again, so the operator can only say so. A Pod in a terminal phase has nothing
 * left to cut: the kubelet writes that phase once its containers have stopped, then removes the Pod itself with a
 * grace of 0 (pkg/kubelet/status/status_manager.go, canBeDeleted and syncPod, Kubernetes v1.37.2), which every
 * graceful deletion ends with. Pure.
 */
public final class ShortenedGraces {
    public static final String REASON = "DeletedWithShorterGrace";

    private ShortenedGraces() {}

    /** One such Pod. */
    public record Shortened(String pod, String uid, long deletionGrace, long ownGrace) {
        public String message() {
            return "Pod " + pod + " was deleted with a grace of " + deletionGrace + " s, shorter than its own "
                    + ownGrace
                    + " s: its requests have at most " + deletionGrace
                    + " s from the deletion to finish before the kubelet"
                    + " stops it, whatever its drain hook planned for " + ownGrace + " s";
        }
    }

    public static List<Shortened> among(Collection<Pod> pods) {
        return pods.stream()
                .map(ShortenedGraces::of)
                .flatMap(Optional::stream)
                .sorted(Comparator.comparing(Shortened::pod))
                .toList();
    }

    private static boolean terminal(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    private static Optional<Shortened> of(Pod pod) {
        Long deletionGrace = pod.getMetadata().getDeletionGracePeriodSeconds();
        Long ownGrace = pod.getSpec() == null ? null : pod.getSpec().getTerminationGracePeriodSeconds();
        if (pod.getMetadata().getDeletionTimestamp() == null
                || deletionGrace == null
                || ownGrace == null
                || deletionGrace >= ownGrace
                || terminal(pod)) {
            return Optional.empty();
        }
        return Optional.of(
                new Shortened(pod.getMetadata().getName(), pod.getMetadata().getUid(), deletionGrace, ownGrace));
    }
}
