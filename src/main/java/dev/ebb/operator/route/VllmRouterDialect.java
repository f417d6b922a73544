package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** vLLM's production-stack router lists its engines by an id derived from each Pod's name. */
final class VllmRouterDialect implements RouterDialect {
    @Override
    public RouterView read(String body, List<Pod> members) {
        return RouterAnswers.vllmEngines(body)
                .map(ids -> new RouterView(Optional.of(members.stream()
                        .anyMatch(m -> ids.contains(RouterAnswers.vllmEngineId(m.getMetadata().getName())))), Map.of()))
                .orElse(RouterView.unavailable());
    }
}
