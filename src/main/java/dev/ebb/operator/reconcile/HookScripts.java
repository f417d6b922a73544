package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What to do about a deployment's drain hook ConfigMaps: this release's revision exists whenever a role is hooked
 * (created before the Pods that mount it, put back if deleted by hand), and an older revision stays as long as any Pod,
 * terminating ones included, mounts it. Pure.
 */
final class HookScripts {
    /**
     * @param create the ConfigMap to create, missing from the cache
     * @param restored whether Pods already mount the one to create: it was deleted while they used it
     * @param delete older revisions no Pod mounts any more
     */
    record Plan(Optional<ConfigMap> create, boolean restored, List<ConfigMap> delete) {}

    private HookScripts() {}

    /** @param desired this release's ConfigMap, empty when no role of the deployment is hooked */
    static Plan plan(Optional<ConfigMap> desired, Collection<ConfigMap> existing, Collection<Pod> pods) {
        Set<String> existingNames =
                existing.stream().map(c -> c.getMetadata().getName()).collect(Collectors.toSet());
        Set<String> mounted = pods.stream()
                .map(PodRenderer::hookConfigMapOf)
                .flatMap(Optional::stream)
                .collect(Collectors.toSet());
        Optional<ConfigMap> create =
                desired.filter(d -> !existingNames.contains(d.getMetadata().getName()));
        boolean restored = create.isPresent()
                && mounted.contains(create.get().getMetadata().getName());
        Optional<String> keep = desired.map(d -> d.getMetadata().getName());
        List<ConfigMap> delete = existing.stream()
                .filter(c -> c.getMetadata().getLabels() != null
                        && c.getMetadata().getLabels().containsKey(Labels.DRAIN_HOOK_REVISION))
                .filter(c -> !keep.equals(Optional.of(c.getMetadata().getName())))
                .filter(c -> !mounted.contains(c.getMetadata().getName()))
                .toList();
        return new Plan(create, restored, delete);
    }
}
