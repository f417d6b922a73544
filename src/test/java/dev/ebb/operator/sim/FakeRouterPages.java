package dev.ebb.operator.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What each fake router answers, in its release's own shape (the fixtures under {@code routers/} quote them). Pure:
 * what the router holds in, answer out.
 */
final class FakeRouterPages {
    /** An HTTP answer. */
    record Answer(int status, String contentType, String body) {}

    static final String JSON = "application/json";
    static final String TEXT = "text/plain; charset=utf-8";
    private static final String PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8";
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** RFC 4122's namespace for DNS names: Python's uuid.NAMESPACE_DNS. */
    private static final UUID NAMESPACE_DNS = UUID.fromString("6ba7b810-9dad-11d1-80b4-00c04fd430c8");

    private FakeRouterPages() {}

    /**
     * llm-d-router v0.10.0, the picker's /metrics. pkg/epp/metrics/collectors/inference_pool.go: one queue gauge per
     * endpoint in the datastore, under the current and the deprecated name, both labelled with the endpoint's id,
     * {@code <pod>-rank-<i>} (pkg/epp/datastore/datastore.go, createEndpointNamespacedName), and the pool's name.
     * pkg/epp/metrics/metrics.go, RecordSchedulerAttempt: each successful decision counts under the chosen endpoint's
     * Pod name, namespace and port, again under both names. The build info gauge is always there
     * (RecordInferenceExtensionInfo, called at start by cmd/epp/runner/runner.go). Labels are in the order the Go
     * client writes them: sorted by name.
     */
    static Answer llmDMetrics(
            List<RoutedEndpoint> held,
            Map<String, Long> attempts,
            Map<String, Integer> ports,
            String pool,
            String namespace,
            String model) {
        StringBuilder page = new StringBuilder();
        page.append(
                        "# HELP inference_extension_info [ALPHA] General information of the current build of Inference Extension.\n")
                .append("# TYPE inference_extension_info gauge\n")
                .append("inference_extension_info{build_ref=\"v0.10.0\",commit=\"unknown\"} 1\n");
        page.append("# HELP llm_d_epp_info [ALPHA] General information of the current build of Inference Extension.\n")
                .append("# TYPE llm_d_epp_info gauge\n")
                .append("llm_d_epp_info{build_ref=\"v0.10.0\",commit=\"unknown\"} 1\n");
        if (!held.isEmpty()) {
            page.append(
                            "# HELP inference_pool_per_pod_queue_size [ALPHA] The total number of requests pending in the model server queue for each underlying pod.\n")
                    .append("# TYPE inference_pool_per_pod_queue_size gauge\n");
            held.forEach(e -> page.append("inference_pool_per_pod_queue_size{model_server_pod=\"")
                    .append(rankZero(e))
                    .append("\",name=\"")
                    .append(pool)
                    .append("\"} 0\n"));
            page.append(
                            "# HELP llm_d_epp_per_endpoint_queue_size [ALPHA] The total number of requests pending in the model server queue for each underlying endpoint.\n")
                    .append("# TYPE llm_d_epp_per_endpoint_queue_size gauge\n");
            held.forEach(e -> page.append("llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"")
                    .append(rankZero(e))
                    .append("\",name=\"")
                    .append(pool)
                    .append("\"} 0\n"));
        }
        if (!attempts.isEmpty()) {
            page.append(
                            "# HELP inference_extension_scheduler_attempts_total [ALPHA] [Deprecated: Use llm_d_epp_scheduler_attempts_total] Total number of scheduling attempts.\n")
                    .append("# TYPE inference_extension_scheduler_attempts_total counter\n");
            attempts.forEach((pod, count) -> page.append("inference_extension_scheduler_attempts_total{namespace=\"")
                    .append(namespace)
                    .append("\",pod_name=\"")
                    .append(pod)
                    .append("\",port=\"")
                    .append(ports.getOrDefault(pod, 0))
                    .append("\",status=\"success\",target_model_name=\"")
                    .append(model)
                    .append("\"} ")
                    .append(count)
                    .append('\n'));
            page.append("# HELP llm_d_epp_scheduler_attempts_total [ALPHA] Total number of scheduling attempts.\n")
                    .append("# TYPE llm_d_epp_scheduler_attempts_total counter\n");
            attempts.forEach((pod, count) -> page.append("llm_d_epp_scheduler_attempts_total{endpoint_name=\"")
                    .append(pod)
                    .append("\",namespace=\"")
                    .append(namespace)
                    .append("\",port=\"")
                    .append(ports.getOrDefault(pod, 0))
                    .append("\",status=\"success\",target_model_name=\"")
                    .append(model)
                    .append("\"} ")
                    .append(count)
                    .append('\n'));
        }
        return new Answer(200, PROMETHEUS, page.toString());
    }

    /** The test world's engines serve one data-parallel rank each. */
    private static String rankZero(RoutedEndpoint e) {
        return e.pod() + "-rank-0";
    }

    /**
     * production-stack vllm-stack-0.1.12 src/vllm_router/routers/main_router.py, get_engine_instances: one card per
     * engine it holds, {@code engine_id} being uuid5(NAMESPACE_DNS, pod name) (service_discovery.py, _add_engine) and
     * {@code created} when it was last added.
     */
    static Answer vllmEngines(List<RoutedEndpoint> held, String model) {
        List<Map<String, Object>> cards = new ArrayList<>();
        for (RoutedEndpoint e : held) {
            Map<String, Object> card = new LinkedHashMap<>();
            card.put("engine_id", uuid5Dns(e.pod()).toString());
            card.put("serving_models", List.of(model));
            card.put("created", e.addedEpochSeconds());
            cards.add(card);
        }
        return json(200, cards);
    }

    /**
     * The model a listed worker serves. The released gateway asks each engine's /v1/models and /server_info when it
     * takes the worker and lists what they said; the fake asks nothing, and the operator reads none of it.
     */
    private static final String STAND_IN_MODEL = "Qwen/Qwen3-8B";

    /**
     * smg v1.9.0 model_gateway/src/worker/service.rs, ListWorkersResult::into_response, each worker a
     * crates/protocols/src/worker.rs WorkerInfo: its id, its WorkerSpec flattened with the None fields skipped, then
     * {@code is_healthy} (Ready only), {@code status} and {@code load}. A draining worker is still listed
     * (WorkerStatus::Draining: kept in the registry while in-flight requests finish). The fields and their order are
     * those the released smg 1.9.0 listed for a worker it discovered (RealGatewayIT): among them the model it learned
     * from the engine, and {@code max_connection_attempts} 20.
     */
    static Answer smgWorkers(List<RoutedEndpoint> held) {
        List<Map<String, Object>> workers = new ArrayList<>();
        for (RoutedEndpoint e : held) {
            Map<String, Object> worker = new LinkedHashMap<>();
            worker.put("id", e.workerId());
            worker.put("model_id", STAND_IN_MODEL);
            worker.put("url", e.base().toString());
            worker.put(
                    "models",
                    List.of(Map.of(
                            "id",
                            STAND_IN_MODEL,
                            "model_type",
                            List.of("chat", "completions", "responses", "tools"),
                            "context_length",
                            8192)));
            worker.put("worker_type", "regular");
            worker.put("connection_mode", "http");
            worker.put("runtime_type", "sglang");
            worker.put(
                    "labels",
                    Map.of("max_model_len", "8192", "served_model_name", STAND_IN_MODEL, "model_path", STAND_IN_MODEL));
            worker.put("priority", 50);
            worker.put("cost", 1.0);
            worker.put("max_connection_attempts", 20);
            worker.put("is_healthy", !e.draining());
            worker.put("status", e.draining() ? "draining" : "ready");
            worker.put("load", 0);
            workers.add(worker);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("workers", workers);
        body.put("total", workers.size());
        body.put("stats", Map.of("prefill_count", 0, "decode_count", 0, "regular_count", workers.size()));
        return json(200, body);
    }

    /** smg v1.9.0 model_gateway/src/worker/service.rs, DeleteWorkerResult::into_response: 202, the removal queued. */
    static Answer smgDeleteAccepted(String workerId) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", "accepted");
        body.put("worker_id", workerId);
        body.put("message", "Worker removal queued for background processing");
        return json(202, body);
    }

    /**
     * smg v1.9.0 model_gateway/src/worker/service.rs, CreateWorkerResult::into_response: 202 with a Location, the
     * addition queued.
     */
    static Answer smgCreateAccepted(String workerId, String url) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", "accepted");
        body.put("worker_id", workerId);
        body.put("url", url);
        body.put("location", "/workers/" + workerId);
        body.put("message", "Worker addition queued for background processing");
        return json(202, body);
    }

    /** smg v1.9.0 model_gateway/src/worker/service.rs, WorkerServiceError::Conflict: a url that already is a worker. */
    static Answer smgWorkerExists(String url, String workerId) {
        return json(
                409,
                workerError(
                        "Worker already exists at URL '" + url + "' with ID " + workerId + ". Use PUT /workers/"
                                + workerId + " to replace or PATCH /workers/" + workerId + " to update.",
                        "WORKER_ALREADY_EXISTS"));
    }

    /**
     * smg v1.9.0 model_gateway/src/config/validation.rs, validate_worker_url, as a BadRequest: a url without one of
     * the four lower-case schemes (ConfigError::InvalidValue's text, model_gateway/src/config/mod.rs).
     */
    static Answer smgBadWorkerUrl(String url) {
        return json(
                400,
                workerError(
                        "Invalid value for field 'worker_url': " + url
                                + " - URL must start with a lowercase http://, https://, grpc://, or grpcs:// scheme",
                        "BAD_REQUEST"));
    }

    /** smg v1.9.0 model_gateway/src/worker/service.rs, WorkerServiceError::NotFound: 404 WORKER_NOT_FOUND. */
    static Answer smgWorkerNotFound(String raw) {
        return json(404, workerError("Worker " + raw + " not found", "WORKER_NOT_FOUND"));
    }

    /** smg v1.9.0 model_gateway/src/worker/service.rs, parse_worker_id: an id that is no UUID is a 400. */
    static Answer smgInvalidWorkerId(String raw, String why) {
        return json(400, workerError("Invalid worker_id '" + raw + "' (expected UUID). Error: " + why, "BAD_REQUEST"));
    }

    private static Map<String, Object> workerError(String error, String code) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("code", code);
        return body;
    }

    /**
     * What a client gets when the router holds no endpoint for its request, before anything streams.
     * llm-d-router v0.10.0 pkg/epp/requestcontrol/director.go: ServiceUnavailable, which pkg/common/error/error.go
     * turns into a 503 whose body is the error's text. production-stack vllm-stack-0.1.12
     * src/vllm_router/services/request_service/request.py, route_general_request: 503 for a model it has seen
     * before, 404 for one it never saw. smg v1.9.0 model_gateway/src/routers/http/router.rs: 503 no_available_workers
     * when workers exist but none can take it, 404 model_not_found when there are none (routers/error.rs).
     */
    static Answer noEndpoint(dev.ebb.operator.api.v1alpha1.RouterKind kind, String model, boolean anyHeld) {
        return switch (kind) {
            case LLM_D_ROUTER ->
                new Answer(
                        503,
                        TEXT,
                        "inference error: ServiceUnavailable - failed to find endpoint candidates for serving the request");
            case VLLM_ROUTER ->
                anyHeld
                        ? json(
                                503,
                                Map.of(
                                        "error",
                                        "Model '" + model + "' is temporarily unavailable. Please try again later."))
                        : json(
                                404,
                                Map.of(
                                        "error",
                                        "Model '" + model
                                                + "' not found. Available models can be listed at /v1/models."));
            case SGLANG_GATEWAY ->
                anyHeld
                        ? smgError(
                                503,
                                "Service Unavailable",
                                "no_available_workers",
                                "All workers are unavailable (circuit breaker open or unhealthy)")
                        : smgError(
                                404, "Not Found", "model_not_found", "No worker available for model '" + model + "'");
        };
    }

    /**
     * What a client gets when the chosen engine cannot be reached. Envoy answers 503 with its local reply;
     * production-stack's route_general_request re-raises the connection error, which FastAPI answers 500; smg's
     * convert_reqwest_error (model_gateway/src/routers/http/router.rs) answers 500 call_upstream_connection_failed.
     */
    static Answer unreachable(dev.ebb.operator.api.v1alpha1.RouterKind kind, String url) {
        return switch (kind) {
            case LLM_D_ROUTER ->
                new Answer(
                        503,
                        TEXT,
                        "upstream connect error or disconnect/reset before headers. reset reason: connection failure");
            case VLLM_ROUTER -> new Answer(500, TEXT, "Internal Server Error");
            case SGLANG_GATEWAY ->
                smgError(
                        500,
                        "Internal Server Error",
                        "call_upstream_connection_failed",
                        "error sending request. URL: " + url);
        };
    }

    /** smg v1.9.0 model_gateway/src/routers/error.rs, create_error: the type is the status's canonical reason. */
    private static Answer smgError(int status, String reason, String code, String message) {
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("type", reason);
        detail.put("code", code);
        detail.put("message", message);
        detail.put("param", null);
        return json(status, Map.of("error", detail));
    }

    /** Python's uuid.uuid5(uuid.NAMESPACE_DNS, name): SHA-1 of the namespace's bytes then the name's, version 5. */
    static UUID uuid5Dns(String name) {
        try {
            MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
            long msb = NAMESPACE_DNS.getMostSignificantBits();
            long lsb = NAMESPACE_DNS.getLeastSignificantBits();
            for (int i = 7; i >= 0; i--) {
                sha1.update((byte) (msb >>> 8 * i));
            }
            for (int i = 7; i >= 0; i--) {
                sha1.update((byte) (lsb >>> 8 * i));
            }
            byte[] hash = sha1.digest(name.getBytes(StandardCharsets.UTF_8));
            hash[6] = (byte) (hash[6] & 0x0f | 0x50);
            hash[8] = (byte) (hash[8] & 0x3f | 0x80);
            long high = 0;
            long low = 0;
            for (int i = 0; i < 8; i++) {
                high = high << 8 | hash[i] & 0xff;
                low = low << 8 | hash[8 + i] & 0xff;
            }
            return new UUID(high, low);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-1", e);
        }
    }

    private static Answer json(int status, Object body) {
        try {
            return new Answer(status, JSON, MAPPER.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
