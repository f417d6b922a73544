package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Pod;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Asks the router itself, over HTTP, what it routes to: SGLang's gateway and vLLM's router list their endpoints;
 * llm-d's endpoint picker only counts per endpoint on its metrics page, so its dispatches are told by a count that
 * moved after the withdrawal began. Any answer it cannot get or read is "cannot tell", never "withdrawn".
 */
@ApplicationScoped
public class HttpRouterProbe implements RouterProbe {
    static final Duration TIMEOUT = Duration.ofSeconds(2);
    static final int MAX_BODY = 4 * 1024 * 1024;
    private static final Logger LOG = Logger.getLogger(HttpRouterProbe.class);

    private final RouterAddress address;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    /** The picker's count for a member as first seen after its withdrawal began: later counts compare to it. */
    private final Map<String, Double> baselines = new ConcurrentHashMap<>();

    public HttpRouterProbe(RouterAddress address) {
        this.address = address;
    }

    @Override
    public RouterView view(ModelDeployment deployment, List<Pod> members, Instant withdrawnAt) {
        Optional<RouterKind> kind = Optional.ofNullable(deployment.getSpec().router()).flatMap(r -> RouterKind.fromWireName(r.name()));
        if (kind.isEmpty()) {
            return RouterView.unavailable();
        }
        Optional<String> body = get(address.of(deployment, kind.get()));
        if (body.isEmpty()) {
            return RouterView.unavailable();
        }
        return switch (kind.get()) {
            case SGLANG_GATEWAY -> RouterAnswers.sglangWorkers(body.get())
                    .map(hosts -> new RouterView(Optional.of(members.stream().anyMatch(m -> hosts.containsKey(ip(m)))), false))
                    .orElse(RouterView.unavailable());
            case VLLM_ROUTER -> RouterAnswers.vllmEngines(body.get())
                    .map(ids -> new RouterView(Optional.of(members.stream()
                            .anyMatch(m -> ids.contains(RouterAnswers.vllmEngineId(m.getMetadata().getName())))), false))
                    .orElse(RouterView.unavailable());
            case LLM_D_ROUTER -> picker(deployment, members, withdrawnAt, body.get());
        };
    }

    private RouterView picker(ModelDeployment deployment, List<Pod> members, Instant withdrawnAt, String metrics) {
        Optional<Set<String>> endpoints = RouterAnswers.eppEndpoints(metrics);
        Optional<Map<String, Double>> attempts = RouterAnswers.eppAttempts(metrics);
        if (endpoints.isEmpty() || attempts.isEmpty()) {
            return RouterView.unavailable();
        }
        boolean selects = members.stream().anyMatch(m -> endpoints.get().stream().anyMatch(e -> RouterAnswers.namesPod(e, m.getMetadata().getName())));
        boolean dispatched = false;
        for (Pod member : members) {
            String name = member.getMetadata().getName();
            double count = attempts.get().entrySet().stream().filter(e -> RouterAnswers.namesPod(e.getKey(), name))
                    .mapToDouble(Map.Entry::getValue).sum();
            double baseline = baselines.computeIfAbsent(deployment.getMetadata().getUid() + "/" + withdrawnAt + "/" + name, k -> count);
            dispatched |= count > baseline;
        }
        return new RouterView(Optional.of(selects), dispatched);
    }

    private Optional<String> get(URI uri) {
        try {
            HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = response.body()) {
                byte[] bytes = in.readNBytes(MAX_BODY + 1);
                if (response.statusCode() != 200 || bytes.length > MAX_BODY) {
                    LOG.debugf("router at %s answered %d with %d bytes", uri, response.statusCode(), bytes.length);
                    return Optional.empty();
                }
                return Optional.of(new String(bytes, StandardCharsets.UTF_8));
            }
        } catch (IOException | IllegalArgumentException e) {
            LOG.debugf("router at %s could not be asked: %s", uri, e.getMessage());
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private static String ip(Pod pod) {
        return pod.getStatus() == null ? null : pod.getStatus().getPodIP();
    }
}
