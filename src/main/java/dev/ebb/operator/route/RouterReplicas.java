package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which of a router's Pods must be asked whether it still routes to a replica. Every replica of a router keeps its
 * own view of the Pods it routes to, so one that has not let the replica go is enough to hold it: all are asked, and
 * one that cannot be asked leaves the answer unknown. vLLM's router, for one, keeps the engines its own watch thread
 * found, and one whose removal it missed while that watch reconnected stays (production-stack
 * src/vllm_router/service_discovery.py, K8sPodIPServiceDiscovery), so one replica can keep an engine the others
 * have dropped. A Pod that has never run, or has no address, has routed nothing and is not asked: a surge Pod that
 * cannot be scheduled or pull its image must not hold every retirement of the deployment. Pure.
 */
public final class RouterReplicas {
    /** Phases whose containers have all stopped: such a Pod routes nothing and has nothing to say. */
    private static final Set<String> ENDED = Set.of("Succeeded", "Failed");

    private RouterReplicas() {}

    /** What to do about a router's Pods. */
    public sealed interface Decision {}

    /** Ask each of these, directly, at its own address. */
    public record Ask(List<Pod> pods) implements Decision {}

    /** The router's answer cannot be known; says why. */
    public record CannotTell(String why) implements Decision {}

    public static Decision toAsk(Collection<Pod> routerPods) {
        List<Pod> running = routerPods.stream()
                .filter(p -> !ENDED.contains(phase(p)))
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .toList();
        if (running.isEmpty()) {
            return new CannotTell("the router has no Pod");
        }
        List<Pod> routing =
                running.stream().filter(RouterReplicas::mayHaveRouted).toList();
        if (routing.isEmpty()) {
            return new CannotTell("no router Pod has run yet");
        }
        for (Pod pod : routing) {
            if (!Readiness.isPodReady(pod)) {
                // it may have routed before it stopped being ready, and may still hold its own view of the replica
                return new CannotTell("router Pod " + pod.getMetadata().getName() + " is not ready");
            }
        }
        return new Ask(routing);
    }

    /**
     * A Pod routes only once every container runs, and it leaves Pending then for good (Running, or an end), so one
     * still Pending, or without an address, has never been ready and never had a request to route.
     */
    static boolean mayHaveRouted(Pod pod) {
        return !"Pending".equals(phase(pod))
                && !phase(pod).isEmpty()
                && address(pod).isPresent();
    }

    /** The address a router Pod answers at, when it has one. */
    public static Optional<String> address(Pod pod) {
        return Optional.ofNullable(pod.getStatus()).map(s -> s.getPodIP()).filter(ip -> !ip.isBlank());
    }

    private static String phase(Pod pod) {
        return pod.getStatus() == null ? "" : String.valueOf(pod.getStatus().getPhase());
    }
}
