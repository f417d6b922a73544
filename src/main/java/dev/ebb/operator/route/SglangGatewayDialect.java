package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** SGLang's model gateway lists its workers by URL; a member is selected while its Pod IP is among them. */
final class SglangGatewayDialect implements RouterDialect {
    @Override
    public RouterView read(String body, List<Pod> members) {
        return RouterAnswers.sglangWorkers(body)
                .map(hosts -> new RouterView(Optional.of(members.stream().anyMatch(m -> hosts.containsKey(ip(m)))), Map.of()))
                .orElse(RouterView.unavailable());
    }

    private static String ip(Pod pod) {
        return pod.getStatus() == null ? null : pod.getStatus().getPodIP();
    }
}
