package dev.ebb.operator.read;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.List;

/**
 * Counters on an engine's metrics page that move when a generation reaches the engine and works: while their sum stands
 * still and the in-flight gauges read idle, no request has reached the member between reads, whatever connections it
 * holds. Only whether the sum changed matters, never its size. Every one must be on the page, or the sum is not known.
 */
public final class RequestCounters {
    private RequestCounters() {}

    public static List<String> of(Engine engine) {
        return switch (engine) {
            // vLLM 0.32.0, vllm/v1/metrics/loggers.py: created per engine at start, so on the page from the first
            // scrape; prompt tokens move at a request's first output, generation tokens at every engine step,
            // request_success at its end (stop, length, or an abort the engine made). A request a client cancels before
            // its first token moves none of them, but sits in the gauges while it waits.
            case VLLM ->
                List.of("vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total");
            // SGLang 0.5.15, observability/metrics_collector.py observe_one_finished_request: one count per request
            // that ends, aborted while running included; its token counters move at the same moment and add nothing.
            // The series appears with the first request that ends, which the server's own warm-up request is before it
            // reports ready (entrypoints/http_server.py _execute_server_warmup).
            case SGLANG -> List.of("sglang:num_requests_total");
        };
    }
}
