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
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Asks the router itself, over HTTP at its admin path, what it routes to, and reads the answer in that router's
 * dialect. Any answer it cannot get or read is "cannot tell", never "withdrawn".
 */
@ApplicationScoped
public class HttpRouterProbe implements RouterProbe {
    static final Duration TIMEOUT = Duration.ofSeconds(2);
    static final int MAX_BODY = 4 * 1024 * 1024;
    private static final Logger LOG = Logger.getLogger(HttpRouterProbe.class);

    private final RouterAddress address;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private final Map<RouterKind, RouterDialect> dialects = new EnumMap<>(Map.of(
            RouterKind.LLM_D_ROUTER, new LlmDRouterDialect(),
            RouterKind.VLLM_ROUTER, new VllmRouterDialect(),
            RouterKind.SGLANG_GATEWAY, new SglangGatewayDialect()));

    public HttpRouterProbe(RouterAddress address) {
        this.address = address;
    }

    @Override
    public RouterView view(ModelDeployment deployment, List<Pod> members) {
        Optional<RouterKind> kind = Optional.ofNullable(deployment.getSpec().router()).flatMap(r -> RouterKind.fromWireName(r.name()));
        if (kind.isEmpty()) {
            return RouterView.unavailable();
        }
        Optional<String> body = get(address.of(deployment, kind.get()));
        if (body.isEmpty()) {
            return RouterView.unavailable();
        }
        return dialects.get(kind.get()).read(body.get(), members);
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
}
