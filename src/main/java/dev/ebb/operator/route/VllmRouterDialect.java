package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * vLLM's production-stack router (vllm-stack-0.1.12) lists its engines at {@code GET /engines} by an id derived from
 * each Pod's name. How it lets a replica go (src/vllm_router/service_discovery.py, K8sPodIPServiceDiscovery): on the
 * DELETED event its label-selected watch gets when the Pod is deleted or no longer matches (serving=false), on a
 * deletion timestamp, or when any container of the Pod is not ready. Its watch is never relisted after a reconnect
 * (production-stack issue #1091), so a replica of the router can keep an engine the others dropped; every router Pod
 * is asked ({@link RouterReplicas}), and one still listing the target holds the retirement.
 */
final class VllmRouterDialect implements RouterDialect {
    @Override
    public RouterView read(String body, List<Pod> members) {
        return RouterAnswers.vllmEngines(body)
                .map(ids -> new RouterView(
                        Optional.of(members.stream()
                                .anyMatch(m -> ids.contains(RouterAnswers.vllmEngineId(
                                        m.getMetadata().getName())))),
                        Map.of()))
                .orElse(RouterView.unavailable("listed its engines in a shape that cannot be read"));
    }
}
