package dev.ebb.operator.reconcile;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The router's Pods against the images the operator now renders for them: how many still run others, and what a new
 * rendering changes. A router whose images change (an operator release with other defaults, spec.router.image) is
 * rolled by its Deployment, a new Pod ready before an old one leaves and each old one finishing its streams first;
 * this tells the user so. Pure.
 */
final class RouterRollout {
    private RouterRollout() {}

    /** Router Pods, leaving ones aside, whose containers run other images than the rendered template's. */
    static int behind(List<Pod> routerPods, Deployment rendered) {
        Map<String, String> wanted = images(rendered.getSpec().getTemplate().getSpec());
        return (int) routerPods.stream()
                .filter(pod -> pod.getMetadata().getDeletionTimestamp() == null)
                .filter(pod -> !images(pod.getSpec()).equals(wanted))
                .count();
    }

    /** What a new rendering changes in the router's images, for an Event; empty when it changes none or is the first. */
    static Optional<String> imagesChange(Optional<Deployment> existing, Deployment rendered) {
        if (existing.isEmpty()) {
            return Optional.empty();
        }
        Map<String, String> before =
                images(existing.get().getSpec().getTemplate().getSpec());
        Map<String, String> after = images(rendered.getSpec().getTemplate().getSpec());
        if (before.equals(after)) {
            return Optional.empty();
        }
        String changes = after.entrySet().stream()
                .filter(e -> !e.getValue().equals(before.get(e.getKey())))
                .map(e -> e.getKey() + " " + before.getOrDefault(e.getKey(), "(new)") + " -> " + e.getValue())
                .collect(Collectors.joining(", "));
        return Optional.of(
                "router images change: " + changes + "; router Pods are replaced one at a time, each new one ready"
                        + " before an old one leaves and each old one finishing its streams first");
    }

    private static Map<String, String> images(PodSpec spec) {
        if (spec == null || spec.getContainers() == null) {
            return Map.of();
        }
        Map<String, String> images = new TreeMap<>();
        for (Container container : spec.getContainers()) {
            images.put(String.valueOf(container.getName()), String.valueOf(container.getImage()));
        }
        return images;
    }
}
