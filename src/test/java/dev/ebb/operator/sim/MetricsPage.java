package dev.ebb.operator.sim;

import dev.ebb.operator.api.EngineRelease;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A /metrics page in the engine's own exposition format: HELP and TYPE lines, the engine's labels, two series
 * per gauge (vLLM data-parallel engines, SGLang dp ranks), a counter with its {@code _created} sample.
 */
final class MetricsPage {
    /** Requests a series runs at once before the rest queue, as an engine's batch size would. */
    static final int BATCH = 4;

    private static final int SERIES = 2;
    private static final EngineRelease SGLANG_BOOTSTRAP_QUEUE_NAMED = new EngineRelease(0, 5, 12);

    private MetricsPage() {}

    /**
     * The in-flight gauges under the names the engine's release publishes them, the current ones when the release is
     * not known. SGLang before v0.5.12 named its prefill bootstrap queue sglang:num_prefill_prealloc_queue_reqs (read
     * in the released v0.5.4 and v0.5.11 packages), the name {@link InFlightGauges} keeps last.
     */
    static List<String> gaugesOf(Engine engine, Optional<EngineRelease> release) {
        boolean beforeRename = engine == Engine.SGLANG
                && release.filter(v -> v.compareTo(SGLANG_BOOTSTRAP_QUEUE_NAMED) < 0)
                        .isPresent();
        return InFlightGauges.of(engine).stream()
                .map(g -> beforeRename ? g.names().get(g.names().size() - 1) : g.name())
                .toList();
    }

    /**
     * What the engine's request counters stand at.
     *
     * @param promptTokens vLLM: the prompt tokens of every request that produced its first output
     * @param generationTokens vLLM: every token streamed
     * @param succeeded vLLM: requests that ran to their end
     * @param ended SGLang: requests that ended after reaching the scheduler, cut ones included
     */
    record RequestTotals(long promptTokens, long generationTokens, long succeeded, long ended) {
        static final RequestTotals NONE = new RequestTotals(0, 0, 0, 0);
    }

    /** @param gauges the in-flight gauges' names as the fake's release publishes them ({@link #gaugesOf}) */
    static String render(
            Engine engine,
            List<String> gauges,
            String model,
            Collection<Long> held,
            RequestTotals totals,
            long createdEpochSeconds,
            String missingGauge,
            int paddingBytes) {
        StringBuilder page = new StringBuilder();
        for (int g = 0; g < gauges.size(); g++) {
            String gauge = gauges.get(g);
            if (gauge.equals(missingGauge)) {
                continue;
            }
            page.append("# HELP ").append(gauge).append(" Requests in this state.\n");
            page.append("# TYPE ").append(gauge).append(" gauge\n");
            for (int s = 0; s < SERIES; s++) {
                page.append(gauge)
                        .append(labels(engine, model, s))
                        .append(' ')
                        .append(count(held, s, g))
                        .append(".0\n");
            }
        }
        if (engine == Engine.VLLM) {
            // created per engine at start (vllm/v1/metrics/loggers.py at 0.32.0), request_success once per finish
            // reason
            counter(page, "vllm:prompt_tokens", labels(engine, model, 0), totals.promptTokens(), createdEpochSeconds);
            counter(
                    page,
                    "vllm:generation_tokens",
                    labels(engine, model, 0),
                    totals.generationTokens(),
                    createdEpochSeconds);
            counter(
                    page,
                    "vllm:request_success",
                    "{engine=\"0\",finished_reason=\"length\",model_name=\"" + escaped(model) + "\"}",
                    totals.succeeded(),
                    createdEpochSeconds);
        } else if (totals.ended() > 0) {
            // the tokenizer manager's counters carry no rank labels, and a series exists only once counted
            // (observability/metrics_collector.py at 0.5.15)
            counter(
                    page,
                    "sglang:num_requests",
                    "{engine_type=\"unified\",model_name=\"" + escaped(model) + "\"}",
                    totals.ended(),
                    createdEpochSeconds);
        }
        page.append("# HELP process_resident_memory_bytes Resident memory size in bytes.\n");
        page.append("# TYPE process_resident_memory_bytes gauge\n");
        page.append("process_resident_memory_bytes 1.2345e+09\n");
        while (page.length() < paddingBytes) {
            page.append("# padding ").append("x".repeat(100)).append('\n');
        }
        return page.toString();
    }

    /** A counter as prometheus_client writes it in the text format: its _total sample and its _created one. */
    private static void counter(StringBuilder page, String name, String labels, long value, long createdEpochSeconds) {
        page.append("# HELP ").append(name).append("_total Requests counted.\n");
        page.append("# TYPE ").append(name).append("_total counter\n");
        page.append(name)
                .append("_total")
                .append(labels)
                .append(' ')
                .append(value)
                .append(".0\n");
        page.append(name)
                .append("_created")
                .append(labels)
                .append(' ')
                .append(createdEpochSeconds)
                .append(".0\n");
    }

    private static String escaped(String model) {
        return model.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static String labels(Engine engine, String model, int series) {
        return engine == Engine.VLLM
                ? "{engine=\"" + series + "\",model_name=\"" + escaped(model) + "\"}"
                : "{dp_rank=\"" + series + "\",engine_type=\"unified\",model_name=\"" + escaped(model)
                        + "\",pp_rank=\"0\",tp_rank=\"0\"}";
    }

    /** Gauge 0 counts running requests up to the batch size; gauge 1 the ones queued behind them; the rest hold none. */
    private static long count(Collection<Long> held, int series, int gauge) {
        long mine = held.stream().filter(id -> id % SERIES == series).count();
        return switch (gauge) {
            case 0 -> Math.min(mine, BATCH);
            case 1 -> Math.max(0, mine - BATCH);
            default -> 0;
        };
    }
}
