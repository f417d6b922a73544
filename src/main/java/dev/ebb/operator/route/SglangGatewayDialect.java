package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * SGLang's model gateway (smg v1.9.0) lists its workers by URL at {@code GET /workers}; a member is selected while its
 * Pod IP is among them. How the gateway lets a replica go (model_gateway/src/service_discovery.rs): on the Pod's
 * deletion timestamp, never because the Pod turned NotReady, and on a label change only at its relist every 60 s. So
 * the operator removes the worker itself, through {@code DELETE /workers/{id}}, once the Pod is withdrawn
 * ({@link SglangWorkerApi}), and confirms it here, from what every router Pod lists.
 */
final class SglangGatewayDialect implements RouterDialect {
    @Override
    public RouterView read(String body, List<Pod> members) {
        return RouterAnswers.sglangWorkers(body)
                .map(hosts -> new RouterView(
                        Optional.of(members.stream()
                                .map(SglangGatewayDialect::ip)
                                .filter(Objects::nonNull)
                                .map(RouterAnswers::normalHost)
                                .flatMap(Optional::stream)
                                .anyMatch(hosts::containsKey)),
                        Map.of()))
                .orElse(RouterView.unavailable("listed its workers in a shape that cannot be read"));
    }

    static String ip(Pod pod) {
        return pod.getStatus() == null ? null : pod.getStatus().getPodIP();
    }
}
