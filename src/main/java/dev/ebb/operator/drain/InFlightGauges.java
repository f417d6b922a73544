package dev.ebb.operator.drain;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The gauges whose sum is the work an engine holds: requests running plus requests queued anywhere inside it.
 * The drain hook and the member reader both get the list from here, so they cannot disagree on what "idle" means.
 */
public final class InFlightGauges {
    private InFlightGauges() {}

    /**
     * One place a request can wait, under every name an engine release has published it as, the current one first: a
     * page must carry at least one of them (one release publishes exactly one), and each that it carries is summed.
     */
    public record Gauge(List<String> names) {
        public Gauge {
            names = List.copyOf(names);
            if (names.isEmpty()) {
                throw new IllegalArgumentException("a gauge has a name");
            }
        }

        static Gauge named(String current, String... earlier) {
            return new Gauge(
                    Stream.concat(Stream.of(current), Arrays.stream(earlier)).toList());
        }

        /** The name current releases publish. */
        public String name() {
            return names.get(0);
        }

        /** How the hook's command line and a reading's message spell it: the names with "|" between them. */
        @Override
        public String toString() {
            return String.join("|", names);
        }
    }

    public static List<Gauge> of(Engine engine) {
        return switch (engine) {
            // waiting includes a decoder's requests still waiting for their KV cache
            case VLLM -> List.of(Gauge.named("vllm:num_requests_running"), Gauge.named("vllm:num_requests_waiting"));
            // every queue a request can sit in, including the prefill/decode hand-off queues. SGLang v0.5.12 renamed
            // the prefill side's first queue: num_prefill_prealloc_queue_reqs up to v0.5.11 (python/sglang/srt/metrics/
            // collector.py at v0.5.4, observability/metrics_collector.py at v0.5.11), num_prefill_bootstrap_queue_reqs
            // since
            case SGLANG ->
                List.of(
                        Gauge.named("sglang:num_running_reqs"),
                        Gauge.named("sglang:num_queue_reqs"),
                        Gauge.named(
                                "sglang:num_prefill_bootstrap_queue_reqs", "sglang:num_prefill_prealloc_queue_reqs"),
                        Gauge.named("sglang:num_prefill_inflight_queue_reqs"),
                        Gauge.named("sglang:num_decode_prealloc_queue_reqs"),
                        Gauge.named("sglang:num_decode_transfer_queue_reqs"));
        };
    }

    /** The hook's {@code --gauges}: the gauges with "," between them, each gauge's names with "|". */
    public static String argument(List<Gauge> gauges) {
        return gauges.stream().map(Gauge::toString).collect(Collectors.joining(","));
    }
}
