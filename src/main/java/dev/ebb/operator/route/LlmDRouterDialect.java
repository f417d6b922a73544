package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * llm-d's endpoint picker has no list to ask, only metrics per endpoint: a queue gauge for each endpoint it holds
 * (selection) and a count of scheduling decisions per endpoint (dispatch). A dispatch since the withdrawal is a count
 * that moved after the first time this withdrawal saw it; counts for other members never matter.
 */
final class LlmDRouterDialect implements RouterDialect {
    /** Enough for every member of every retirement in flight; the oldest first counts are forgotten first. */
    private static final int REMEMBERED = 4096;
    private final Map<String, Double> baselines = Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Double> eldest) {
            return size() > REMEMBERED;
        }
    });

    @Override
    public RouterView read(String body, List<Pod> members, String operation) {
        Optional<Set<String>> endpoints = RouterAnswers.eppEndpoints(body);
        Optional<Map<String, Double>> attempts = RouterAnswers.eppAttempts(body);
        if (endpoints.isEmpty() || attempts.isEmpty()) {
            return RouterView.unavailable();
        }
        boolean selects = members.stream()
                .anyMatch(m -> endpoints.get().stream().anyMatch(e -> RouterAnswers.namesPod(e, m.getMetadata().getName())));
        boolean dispatched = false;
        for (Pod member : members) {
            String name = member.getMetadata().getName();
            double count = attempts.get().entrySet().stream().filter(e -> RouterAnswers.namesPod(e.getKey(), name))
                    .mapToDouble(Map.Entry::getValue).sum();
            dispatched |= count > baselines.computeIfAbsent(operation + "/" + name, key -> count);
        }
        return new RouterView(Optional.of(selects), dispatched);
    }
}
