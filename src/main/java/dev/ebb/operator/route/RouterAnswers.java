package dev.ebb.operator.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.read.PrometheusText;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * What each router's own admin answer says about the endpoints it routes to. Pure: bodies in, facts out, nothing
 * thrown; an answer that cannot be read is empty, which the probe reports as "cannot tell".
 */
public final class RouterAnswers {
    /**
     * llm-d's endpoint picker: a queue gauge per endpoint it holds, labelled {@code <pod>-rank-<i>}, one per target port
     * (pkg/epp/metrics/llm_d_router_metrics.go DescInferencePoolPerEndpointQueueSize, emitted for every endpoint of its
     * datastore by pkg/epp/metrics/collectors/inference_pool.go, names from pkg/epp/datastore/datastore.go
     * createEndpointNamespacedName, at llm-d-router v0.10.0).
     */
    static final String EPP_ENDPOINT_GAUGE = "llm_d_epp_per_endpoint_queue_size";
    static final String EPP_ENDPOINT_GAUGE_LABEL = "model_server_endpoint";
    /** The same gauge under its deprecated name, still emitted beside it (collectors/inference_pool.go at v0.10.0). */
    static final String GIE_ENDPOINT_GAUGE = "inference_pool_per_pod_queue_size";
    static final String GIE_ENDPOINT_GAUGE_LABEL = "model_server_pod";
    /**
     * llm-d's endpoint picker: one count per scheduling decision, labelled with the Pod name of the endpoint it picked
     * (pkg/epp/metrics/llm_d_router_metrics.go llmdSchedulerAttemptsTotal, recorded by pkg/epp/metrics/metrics.go
     * RecordSchedulerAttempt at v0.10.0).
     */
    static final String EPP_ATTEMPTS = "llm_d_epp_scheduler_attempts_total";
    static final String EPP_ATTEMPTS_LABEL = "endpoint_name";
    /** The same count under its deprecated name, still recorded beside it (metrics.go at v0.10.0). */
    static final String GIE_ATTEMPTS = "inference_extension_scheduler_attempts_total";
    static final String GIE_ATTEMPTS_LABEL = "pod_name";

    /** RFC 4122's namespace for DNS names, which vLLM's router hashes Pod names under. */
    private static final UUID NAMESPACE_DNS = UUID.fromString("6ba7b810-9dad-11d1-80b4-00c04fd430c8");
    private static final ObjectMapper JSON = new ObjectMapper();

    private RouterAnswers() {
    }

    /**
     * SGLang's model gateway, {@code GET /workers}: {"workers":[{"url":"http://10.0.0.7:8000", "requests_total":
     * 12, ...}]}. The hosts it routes to, each with the requests it has sent there when it says.
     */
    public static Optional<Map<String, Double>> sglangWorkers(String body) {
        return json(body).map(root -> root.path("workers")).filter(JsonNode::isArray).map(workers -> {
            Map<String, Double> hosts = new HashMap<>();
            for (JsonNode worker : workers) {
                hostOf(worker.path("url").asText("")).ifPresent(host ->
                        hosts.merge(host, worker.path("requests_total").asDouble(0), Double::sum));
            }
            return hosts;
        });
    }

    /** vLLM's production-stack router, {@code GET /engines}: [{"engine_id": "...", ...}]. The engine ids it routes to. */
    public static Optional<Set<String>> vllmEngines(String body) {
        return json(body).filter(JsonNode::isArray).map(engines -> {
            Set<String> ids = new HashSet<>();
            engines.forEach(engine -> ids.add(engine.path("engine_id").asText("")));
            return ids;
        });
    }

    /** The id vLLM's router gives an engine it found by Pod IP: a name-based (SHA-1) UUID of the Pod's name. */
    public static String vllmEngineId(String podName) {
        try {
            MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
            sha1.update(toBytes(NAMESPACE_DNS));
            byte[] hash = sha1.digest(podName.getBytes(StandardCharsets.UTF_8));
            hash[6] = (byte) (hash[6] & 0x0f | 0x50);
            hash[8] = (byte) (hash[8] & 0x3f | 0x80);
            long msb = 0;
            long lsb = 0;
            for (int i = 0; i < 8; i++) {
                msb = msb << 8 | hash[i] & 0xff;
                lsb = lsb << 8 | hash[8 + i] & 0xff;
            }
            return new UUID(msb, lsb).toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-1", e);
        }
    }

    /**
     * Prefixes only the endpoint picker's own metrics carry: a page without any is some other server's. Every picker
     * page has at least its build info under both generations, llm_d_epp_info and inference_extension_info
     * (pkg/epp/metrics/metrics.go RecordInferenceExtensionInfo at v0.10.0).
     */
    private static final List<String> PICKER_PREFIXES = List.of("llm_d_epp_", "inference_pool_", "inference_extension_",
            "inference_objective_");

    /**
     * llm-d's endpoint picker, its {@code /metrics}: the endpoints it holds, by the label naming them, under either
     * name. Empty when the page is not the picker's, so that another server's metrics never read as "holds nothing";
     * a picker page without the gauge holds nothing, since the picker emits no series while its datastore is empty.
     */
    public static Optional<Set<String>> eppEndpoints(String metrics) {
        if (!isPickerPage(metrics)) {
            return Optional.empty();
        }
        Optional<Map<String, Double>> current = PrometheusText.byLabel(metrics, EPP_ENDPOINT_GAUGE, EPP_ENDPOINT_GAUGE_LABEL);
        Optional<Map<String, Double>> upstream = PrometheusText.byLabel(metrics, GIE_ENDPOINT_GAUGE, GIE_ENDPOINT_GAUGE_LABEL);
        if (current.isEmpty()) {
            return Optional.empty();
        }
        Set<String> endpoints = new HashSet<>(current.get().keySet());
        upstream.ifPresent(u -> endpoints.addAll(u.keySet()));
        return Optional.of(endpoints);
    }

    /**
     * llm-d's endpoint picker, its {@code /metrics}: scheduling decisions so far, by the Pod picked, summed over its
     * other labels; where both names count the same decisions the larger is taken. Empty when a count is no number,
     * since no comparison with it could show a dispatch.
     */
    public static Optional<Map<String, Double>> eppAttempts(String metrics) {
        if (!isPickerPage(metrics)) {
            return Optional.empty();
        }
        Optional<Map<String, Double>> current = PrometheusText.byLabel(metrics, EPP_ATTEMPTS, EPP_ATTEMPTS_LABEL);
        Optional<Map<String, Double>> upstream = PrometheusText.byLabel(metrics, GIE_ATTEMPTS, GIE_ATTEMPTS_LABEL);
        if (current.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Double> attempts = new HashMap<>(current.get());
        upstream.ifPresent(u -> u.forEach((endpoint, count) -> attempts.merge(endpoint, count, Math::max)));
        if (attempts.values().stream().anyMatch(count -> !Double.isFinite(count))) {
            return Optional.empty();
        }
        return Optional.of(attempts);
    }

    private static boolean isPickerPage(String metrics) {
        // the probe never hands over more than its cap; a longer text from elsewhere is not read either
        if (metrics == null || metrics.length() > HttpRouterProbe.MAX_ANSWER_BYTES) {
            return false;
        }
        return PrometheusText.names(metrics).stream().anyMatch(name -> PICKER_PREFIXES.stream().anyMatch(name::startsWith));
    }

    /**
     * Whether an endpoint name the picker reports is this Pod: the Pod itself, as its scheduling counts name it, or one
     * of its endpoints, {@code <pod>-rank-<i>} for the i-th target port (pkg/epp/datastore/datastore.go at v0.10.0).
     */
    public static boolean namesPod(String endpoint, String pod) {
        return endpoint.equals(pod) || endpoint.startsWith(pod + "-rank-");
    }

    private static Optional<JsonNode> json(String body) {
        // the probe never hands over more than its cap; a longer text from elsewhere is not parsed either
        if (body == null || body.length() > HttpRouterProbe.MAX_ANSWER_BYTES) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(JSON.readTree(body));
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    private static Optional<String> hostOf(String url) {
        try {
            return Optional.ofNullable(URI.create(url).getHost());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static byte[] toBytes(UUID uuid) {
        byte[] out = new byte[16];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (uuid.getMostSignificantBits() >>> 8 * (7 - i));
            out[8 + i] = (byte) (uuid.getLeastSignificantBits() >>> 8 * (7 - i));
        }
        return out;
    }
}
