package dev.ebb.operator.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.read.PrometheusText;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

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

    private RouterAnswers() {}

    /**
     * One worker SGLang's gateway lists.
     *
     * @param id its id in the gateway's registry, what {@code DELETE /workers/{id}} takes; empty when the entry gives
     *     none that is a UUID, and then it cannot be removed
     * @param host the host it sends requests to, as a Pod IP would be written
     * @param load the requests it counts in flight there
     */
    public record SglangWorker(String id, String host, double load) {}

    private static final Pattern UUID_TEXT =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    private static final List<String> WORKER_SCHEMES = List.of("http://", "https://", "grpc://", "grpcs://");
    /** A data-parallel worker's url is its base with the rank appended (crates/protocols/src/worker.rs, dp_base_url). */
    private static final Pattern RANK_SUFFIX = Pattern.compile("@\\d+$");

    private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9.-]+");

    /**
     * SGLang's model gateway, {@code GET /workers} at smg v1.9.0 (ListWorkersResult in
     * model_gateway/src/worker/service.rs): {"workers":[{"id":"<uuid>","url":"http://10.0.0.7:8000",
     * "worker_type":"regular",...,"load":3}],"total":1,"stats":{...}}. Empty when the answer, or any worker's url in
     * it, cannot be read: an entry that cannot be read might be the very Pod asked about.
     */
    public static Optional<List<SglangWorker>> sglangWorkerList(String body) {
        Optional<JsonNode> workers =
                json(body).map(root -> root.path("workers")).filter(JsonNode::isArray);
        if (workers.isEmpty()) {
            return Optional.empty();
        }
        List<SglangWorker> listed = new ArrayList<>();
        for (JsonNode worker : workers.get()) {
            JsonNode url = worker.path("url");
            Optional<String> host = url.isTextual() ? workerHost(url.asText()) : Optional.empty();
            if (host.isEmpty()) {
                return Optional.empty();
            }
            JsonNode id = worker.path("id");
            String uuid = id.isTextual() && UUID_TEXT.matcher(id.asText()).matches()
                    ? id.asText().toLowerCase(Locale.ROOT)
                    : "";
            listed.add(new SglangWorker(uuid, host.get(), worker.path("load").asDouble(0)));
        }
        return Optional.of(List.copyOf(listed));
    }

    /** The hosts SGLang's gateway sends to, each with the requests it counts in flight there. */
    public static Optional<Map<String, Double>> sglangWorkers(String body) {
        return sglangWorkerList(body).map(workers -> {
            Map<String, Double> hosts = new HashMap<>();
            workers.forEach(worker -> hosts.merge(worker.host(), worker.load(), Double::sum));
            return hosts;
        });
    }

    /**
     * Which of the gateway's workers to remove so that it stops sending to the target Pods: every one whose host is
     * a target's Pod IP (a data-parallel Pod is listed once per rank), by id, each once and in a stable order. A
     * worker with no usable id is left out: the gateway cannot be asked to remove it, and it stays listed, which holds
     * the retirement.
     *
     * @param targetIps the Pod IPs of the retirement's target members
     */
    public static List<String> sglangWorkersToRemove(List<SglangWorker> listed, Collection<String> targetIps) {
        Set<String> targets = new HashSet<>();
        targetIps.stream()
                .filter(Objects::nonNull)
                .map(RouterAnswers::normalHost)
                .flatMap(Optional::stream)
                .forEach(targets::add);
        return listed.stream()
                .filter(worker -> !worker.id().isEmpty() && targets.contains(worker.host()))
                .map(SglangWorker::id)
                .distinct()
                .sorted()
                .toList();
    }

    /**
     * Which restored members to add back to a gateway Pod: those whose IP it lists no worker at, by the url to add,
     * in a stable order.
     *
     * @param wanted each restored member's IP, as {@link #normalHost} spells it, with the url to add it under
     */
    public static List<String> sglangWorkersToAdd(List<SglangWorker> listed, Map<String, String> wanted) {
        Set<String> hosts = new HashSet<>();
        listed.forEach(worker -> hosts.add(worker.host()));
        return wanted.entrySet().stream()
                .filter(e -> !hosts.contains(e.getKey()))
                .map(Map.Entry::getValue)
                .sorted()
                .toList();
    }

    /**
     * The host of a worker's url: with a scheme (as the gateway registers it) or bare {@code host:port} (as its
     * discovery submits it), with a rank suffix or not.
     */
    static Optional<String> workerHost(String url) {
        String rest = url;
        for (String scheme : WORKER_SCHEMES) {
            if (rest.regionMatches(true, 0, scheme, 0, scheme.length())) {
                rest = rest.substring(scheme.length());
                break;
            }
        }
        int pathAt = indexOfAny(rest, "/?#");
        String authority = RANK_SUFFIX
                .matcher(pathAt < 0 ? rest : rest.substring(0, pathAt))
                .replaceFirst("");
        if (authority.contains("@")) {
            return Optional.empty();
        }
        String host;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) {
                return Optional.empty();
            }
            host = authority.substring(1, close);
        } else {
            int colon = authority.indexOf(':');
            if (colon >= 0 && authority.indexOf(':', colon + 1) >= 0) {
                return Optional.empty();
            }
            host = colon < 0 ? authority : authority.substring(0, colon);
        }
        return normalHost(host);
    }

    /** One spelling per address, so that a Pod IP and a url naming it compare equal; empty for what is no host. */
    static Optional<String> normalHost(String host) {
        if (host.contains(":")) {
            // an IPv6 literal: parsing one resolves nothing, and gives it the one spelling Java writes
            if (!host.matches("[0-9A-Fa-f:.]+")) {
                return Optional.empty();
            }
            try {
                return Optional.of(InetAddress.getByName(host).getHostAddress());
            } catch (UnknownHostException e) {
                return Optional.empty();
            }
        }
        return HOST_NAME.matcher(host).matches() ? Optional.of(host.toLowerCase(Locale.ROOT)) : Optional.empty();
    }

    private static int indexOfAny(String text, String characters) {
        for (int i = 0; i < text.length(); i++) {
            if (characters.indexOf(text.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    /**
     * vLLM's production-stack router, {@code GET /engines} at vllm-stack-0.1.12 (get_engine_instances in
     * src/vllm_router/routers/main_router.py): [{"engine_id": "...", "serving_models": [...], "created": ...}]. The
     * engine ids it routes to; empty when the answer, or any engine's id in it, cannot be read.
     */
    public static Optional<Set<String>> vllmEngines(String body) {
        return json(body).filter(JsonNode::isArray).flatMap(engines -> {
            Set<String> ids = new HashSet<>();
            for (JsonNode engine : engines) {
                JsonNode id = engine.path("engine_id");
                if (!id.isTextual()) {
                    return Optional.empty();
                }
                ids.add(id.asText());
            }
            return Optional.of(ids);
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
    private static final List<String> PICKER_PREFIXES =
            List.of("llm_d_epp_", "inference_pool_", "inference_extension_", "inference_objective_");

    /**
     * llm-d's endpoint picker, its {@code /metrics}: the endpoints it holds, by the label naming them, under either
     * name. Empty when the page is not the picker's, so that another server's metrics never read as "holds nothing";
     * a picker page without the gauge holds nothing, since the picker emits no series while its datastore is empty.
     */
    public static Optional<Set<String>> eppEndpoints(String metrics) {
        if (!isPickerPage(metrics)) {
            return Optional.empty();
        }
        Optional<Map<String, Double>> current =
                PrometheusText.byLabel(metrics, EPP_ENDPOINT_GAUGE, EPP_ENDPOINT_GAUGE_LABEL);
        Optional<Map<String, Double>> upstream =
                PrometheusText.byLabel(metrics, GIE_ENDPOINT_GAUGE, GIE_ENDPOINT_GAUGE_LABEL);
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
        return PrometheusText.names(metrics).stream()
                .anyMatch(name -> PICKER_PREFIXES.stream().anyMatch(name::startsWith));
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

    private static byte[] toBytes(UUID uuid) {
        byte[] out = new byte[16];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (uuid.getMostSignificantBits() >>> 8 * (7 - i));
            out[8 + i] = (byte) (uuid.getLeastSignificantBits() >>> 8 * (7 - i));
        }
        return out;
    }
}
