package dev.ebb.operator.drain;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.List;

/**
 * The gauges whose sum is the work an engine holds: requests running plus requests queued anywhere inside it.
 * The drain hook and the member reader both get the list from here, so they cannot disagree on what "idle" means.
 */
public final class InFlightGauges {
    private InFlightGauges() {
    }

    public static List<String> of(Engine engine) {
        return switch (engine) {
            // waiting includes a decoder's requests still waiting for their KV cache
            case VLLM -> List.of("vllm:num_requests_running", "vllm:num_requests_waiting");
            // every queue a request can sit in, including the prefill/decode hand-off queues
            case SGLANG -> List.of(
                    "sglang:num_running_reqs",
                    "sglang:num_queue_reqs",
                    "sglang:num_prefill_bootstrap_queue_reqs",
                    "sglang:num_prefill_inflight_queue_reqs",
                    "sglang:num_decode_prealloc_queue_reqs",
                    "sglang:num_decode_transfer_queue_reqs");
        };
    }
}
