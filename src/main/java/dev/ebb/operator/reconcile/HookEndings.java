package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.drain.HookEnding;
import dev.ebb.operator.observe.EventRecorder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Watches Pod updates for an engine whose drain hook let SIGTERM through without proving it idle (no script, nothing
 * to measure, the last read's deadline), as the hook wrote into the container's termination message and the kubelet
 * reported it in the terminated state, and tells it on the Pod's ModelDeployment with a Warning. The kubelet deletes
 * the Pod right after that update, so it is caught on the watch, not in a reconcile that may only find the Pod gone.
 */
final class HookEndings {
    static final String REASON = "DrainHookUnproven";
    private final EventRecorder events;

    HookEndings(EventRecorder events) {
        this.events = events;
    }

    /** The Pod informer's update filter: it passes every update on, and tells a hook's unproven ending once. */
    boolean observe(Pod newPod, Pod oldPod) {
        if (newPod.getMetadata().getDeletionTimestamp() != null) {
            Optional<String> message = terminationMessage(newPod);
            if (message.isPresent() && !message.equals(terminationMessage(oldPod))) {
                HookEnding.in(message.get())
                        .filter(ending -> !ending.provenIdle())
                        .ifPresent(ending -> tell(newPod, ending));
            }
        }
        return true;
    }

    /** The Event's text. Pure. */
    static String sentence(String pod, HookEnding ending) {
        return "the drain hook of " + pod + " let SIGTERM through without reading its engine idle ("
                + ending.kind().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + "): " + ending.line()
                + "; what the engine still held then depended on its own shutdown";
    }

    private void tell(Pod pod, HookEnding ending) {
        owner(pod)
                .ifPresent(md -> Infrastructure.getDefaultWorkerPool()
                        .execute(() -> events.warning(
                                md, REASON, sentence(pod.getMetadata().getName(), ending))));
    }

    private static Optional<String> terminationMessage(Pod pod) {
        return Optional.ofNullable(pod.getStatus()).map(s -> s.getContainerStatuses()).orElse(List.of()).stream()
                .filter(c -> EnginePod.CONTAINER.equals(c.getName()))
                .map(ContainerStatus::getState)
                .filter(Objects::nonNull)
                .map(s -> s.getTerminated())
                .filter(Objects::nonNull)
                .map(t -> t.getMessage())
                .filter(Objects::nonNull)
                .findFirst();
    }

    /** The ModelDeployment that controls the Pod, as its owner reference names it. */
    private static Optional<ModelDeployment> owner(Pod pod) {
        return Optional.ofNullable(pod.getMetadata().getOwnerReferences()).orElse(List.of()).stream()
                .filter(ref -> Boolean.TRUE.equals(ref.getController())
                        && ModelDeployment.class.getSimpleName().equals(ref.getKind()))
                .findFirst()
                .map(ref -> subject(pod, ref));
    }

    private static ModelDeployment subject(Pod pod, OwnerReference ref) {
        ModelDeployment md = new ModelDeployment();
        md.setMetadata(new ObjectMetaBuilder()
                .withName(ref.getName())
                .withNamespace(pod.getMetadata().getNamespace())
                .withUid(ref.getUid())
                .build());
        return md;
    }
}
