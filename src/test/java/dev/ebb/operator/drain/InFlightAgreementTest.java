package dev.ebb.operator.drain;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.PrometheusText;
import dev.ebb.operator.read.Reading;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The drain hook (Python, in the Pod) and the operator's reader (Java) decide "idle" on their own, from the same list
 * of gauges. Given the same pages, they must agree: the same count when both can read a page, and both refusing to
 * call it idle when either cannot. Each page is read by the hook's own {@code in_flight}, loaded from the script the
 * operator ships.
 */
class InFlightAgreementTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path SCRIPT = Path.of("src", "main", "resources", DrainHook.RESOURCE);

    /** Pages as engines publish them, and pages no engine should, each for vLLM's gauges or SGLang's. */
    private static Map<String, Page> pages() {
        Map<String, Page> pages = new LinkedHashMap<>();
        pages.put("vLLM idle", new Page(Engine.VLLM, """
                # HELP vllm:num_requests_running Number of requests in model execution batches.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0",model_name="qwen"} 0.0
                # TYPE vllm:num_requests_waiting gauge
                vllm:num_requests_waiting{engine="0",model_name="qwen"} 0.0
                """));
        pages.put("vLLM busy on two engines", new Page(Engine.VLLM, """
                vllm:num_requests_running{engine="0",model_name="qwen"} 2.0
                vllm:num_requests_running{engine="1",model_name="qwen"} 1.0
                vllm:num_requests_waiting{engine="0",model_name="qwen"} 4.0
                vllm:num_requests_waiting{engine="1",model_name="qwen"} 0.0
                """));
        pages.put("labels with spaces, braces and escaped quotes", new Page(Engine.VLLM, """
                vllm:num_requests_running{model_name="a {b} \\"c\\" d"} 1
                vllm:num_requests_waiting{model_name="x y"} 0 1733000000000
                """));
        pages.put("SGLang, the prefill queue under its old name", new Page(Engine.SGLANG, """
                sglang:num_running_reqs{tp_rank="0"} 0.0
                sglang:num_queue_reqs{tp_rank="0"} 0.0
                sglang:num_prefill_prealloc_queue_reqs{tp_rank="0"} 3.0
                sglang:num_prefill_inflight_queue_reqs{tp_rank="0"} 0.0
                sglang:num_decode_prealloc_queue_reqs{tp_rank="0"} 0.0
                sglang:num_decode_transfer_queue_reqs{tp_rank="0"} 0.0
                """));
        pages.put("SGLang without its decode queues", new Page(Engine.SGLANG, """
                sglang:num_running_reqs{tp_rank="0"} 0.0
                sglang:num_queue_reqs{tp_rank="0"} 0.0
                sglang:num_prefill_bootstrap_queue_reqs{tp_rank="0"} 0.0
                sglang:num_prefill_inflight_queue_reqs{tp_rank="0"} 0.0
                """));
        pages.put("a gauge missing", new Page(Engine.VLLM, "vllm:num_requests_running 0\n"));
        pages.put("comments only", new Page(Engine.VLLM, "# HELP vllm:num_requests_running x\n"));
        pages.put("empty", new Page(Engine.VLLM, ""));
        pages.put("NaN", new Page(Engine.VLLM, "vllm:num_requests_running NaN\nvllm:num_requests_waiting 0\n"));
        pages.put("negative", new Page(Engine.VLLM, "vllm:num_requests_running -1\nvllm:num_requests_waiting 0\n"));
        pages.put("+Inf", new Page(Engine.VLLM, "vllm:num_requests_running +Inf\nvllm:num_requests_waiting 0\n"));
        pages.put("a value that is no number", new Page(Engine.VLLM, """
                vllm:num_requests_running zero
                vllm:num_requests_waiting 0
                """));
        pages.put("a line cut off before its value", new Page(Engine.VLLM, """
                vllm:num_requests_running 0
                vllm:num_requests_waiting{model_name="qwen"
                """));
        pages.put("framing bytes of a chunked transfer", new Page(Engine.VLLM, """
                1a4
                vllm:num_requests_running 0
                vllm:num_requests_waiting 0
                """));
        pages.put("a sample with more fields than a value and a timestamp", new Page(Engine.VLLM, """
                vllm:num_requests_running 0 1733000000000 7
                vllm:num_requests_waiting 0
                """));
        pages.put("a name no metric can have", new Page(Engine.VLLM, """
                vllm-num-requests 3
                vllm:num_requests_running 0
                vllm:num_requests_waiting 0
                """));
        pages.put("a value in exponent form", new Page(Engine.VLLM, """
                vllm:num_requests_running 2e0
                vllm:num_requests_waiting 0
                """));
        pages.put(
                "Windows line ends",
                new Page(Engine.VLLM, "vllm:num_requests_running 1\r\nvllm:num_requests_waiting 0\r\n"));
        pages.put("an HTML error page", new Page(Engine.VLLM, "<html><body>502 Bad Gateway</body></html>\n"));
        pages.put("other metrics around idle gauges", new Page(Engine.VLLM, """
                process_cpu_seconds_total 12.5
                vllm:num_requests_running 0
                vllm:gpu_cache_usage_perc 0.5
                vllm:num_requests_waiting 0
                http_requests_total{handler="/v1/completions",method="POST"} 31
                """));
        return pages;
    }

    private record Page(Engine engine, String body) {}

    @Test
    void theHookAndTheReaderAgreeOnEveryPage() throws Exception {
        Map<String, Page> pages = pages();
        JsonNode hook = hookReadings(pages);

        List<String> disagreements = new ArrayList<>();
        for (Map.Entry<String, Page> page : pages.entrySet()) {
            Reading java = PrometheusText.read(
                    page.getValue().body(), InFlightGauges.of(page.getValue().engine()));
            JsonNode python = hook.path(page.getKey());
            String javaSays = java instanceof Reading.Idle
                    ? "0.0"
                    : java instanceof Reading.Busy busy ? Double.toString(busy.inFlight()) : "refused";
            String pythonSays =
                    python.has("count") ? Double.toString(python.path("count").asDouble()) : "refused";
            if (!javaSays.equals(pythonSays)) {
                disagreements.add(page.getKey() + ": reader " + java + ", hook " + python);
            }
        }

        assertThat(disagreements).isEmpty();
        // the pages cover both outcomes, so agreeing is not agreeing on nothing
        assertThat(hook.findValues("count")).hasSizeGreaterThanOrEqualTo(5);
        assertThat(hook.findValues("busy")).hasSizeGreaterThanOrEqualTo(8);
    }

    /** Each page's reading by the hook's own function: {"count": n}, or {"busy": why} where it refuses to say idle. */
    private static JsonNode hookReadings(Map<String, Page> pages) throws IOException, InterruptedException {
        Map<String, Object> input = new LinkedHashMap<>();
        pages.forEach((name, page) -> input.put(
                name,
                Map.of(
                        "body",
                        page.body(),
                        "slots",
                        InFlightGauges.of(page.engine()).stream()
                                .map(InFlightGauges.Gauge::names)
                                .toList())));
        String program = """
                import json, runpy, sys
                hook = runpy.run_path(sys.argv[1], run_name="in_flight_agreement")
                hook["load_modules"]()
                out = {}
                for name, page in json.load(sys.stdin).items():
                    try:
                        out[name] = {"count": float(hook["in_flight"](page["body"], page["slots"]))}
                    except hook["Busy"] as e:
                        out[name] = {"busy": str(e)}
                print(json.dumps(out))
                """;
        Process python = new ProcessBuilder("python3", "-c", program, SCRIPT.toString()).start();
        python.getOutputStream().write(JSON.writeValueAsBytes(input));
        python.getOutputStream().close();
        String out = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(python.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(python.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(python.exitValue()).as(err).isZero();
        assertThat(Files.exists(SCRIPT)).isTrue();
        return JSON.readTree(out);
    }
}
