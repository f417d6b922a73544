package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * llm-d's endpoint picker has no list to ask, only metrics per endpoint on its metrics port: a queue gauge for each
 * endpoint it holds (selection: any series naming a member, whatever its value) and a count of scheduling decisions
 * per Pod (dispatch), summed here over the series that name each member, under the released names of llm-d-router
 * v0.10.0 and their deprecated twins (see {@link RouterAnswers}). Whether a count moved since the withdrawal is the
 * retirement's to decide, against the counts it read before writing it. A page that cannot be read says nothing.
 */
final class LlmDRouterDialect implements RouterDialect {
    @Override
    public RouterView read(String body, List<Pod> members) {
        Optional<Set<String>> endpoints = RouterAnswers.eppEndpoints(body);
        Optional<Map<String, Double>> attempts = RouterAnswers.eppAttempts(body);
        if (endpoints.isEmpty() || attempts.isEmpty()) {
            return RouterView.unavailable("served a metrics page without the endpoints or attempts it must show");
        }
        boolean selects = members.stream()
                .anyMatch(m -> endpoints.get().stream()
                        .anyMatch(e -> RouterAnswers.namesPod(e, m.getMetadata().getName())));
        Map<String, Double> dispatches = new HashMap<>();
        for (Pod member : members) {
            String name = member.getMetadata().getName();
            dispatches.put(
                    name,
                    attempts.get().entrySet().stream()
                            .filter(e -> RouterAnswers.namesPod(e.getKey(), name))
                            .mapToDouble(Map.Entry::getValue)
                            .sum());
        }
        return new RouterView(Optional.of(selects), Map.copyOf(dispatches));
    }
}
