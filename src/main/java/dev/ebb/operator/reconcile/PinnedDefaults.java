package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A Pod created on the operator's default image, whose role now names that same image in the spec, runs what the role
 * asks for: pinning the image that runs restarts nothing. The default is kept out of the config hash, so such a Pod
 * carries another hash than the role now renders; it is seen at the role's hash instead. Pure: the Pods are copies.
 */
final class PinnedDefaults {
    private PinnedDefaults() {}

    static List<Pod> seenAtTheirRolesHash(
            Collection<Pod> pods, DesiredDeployment deployment, Map<String, String> hashes, PodRenderer renderer) {
        Map<String, String> onDefault = new HashMap<>();
        Map<String, DesiredRole> pinned = new HashMap<>();
        for (DesiredRole role : deployment.roles()) {
            renderer.configHashOnDefault(deployment, role).ifPresent(hash -> {
                onDefault.put(role.name(), hash);
                pinned.put(role.name(), role);
            });
        }
        return pods.stream()
                .map(pod -> {
                    String role = PodFacts.label(pod, Labels.ROLE).orElse(null);
                    DesiredRole desired = pinned.get(role);
                    boolean createdOnThatDefault = desired != null
                            && PodFacts.label(pod, Labels.CONFIG_HASH)
                                    .filter(onDefault.get(role)::equals)
                                    .isPresent()
                            && pod.getMetadata().getAnnotations() != null
                            && Objects.equals(
                                    pod.getMetadata().getAnnotations().get(Annotations.DEFAULT_IMAGE), desired.image());
                    return createdOnThatDefault
                            ? new PodBuilder(pod)
                                    .editMetadata()
                                    .addToLabels(Labels.CONFIG_HASH, hashes.get(role))
                                    .endMetadata()
                                    .build()
                            : pod;
                })
                .toList();
    }
}
