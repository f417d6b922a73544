package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PrometheusTextTest {
    private static final List<InFlightGauges.Gauge> VLLM = InFlightGauges.of(Engine.VLLM);
    private static final List<InFlightGauges.Gauge> SGLANG = InFlightGauges.of(Engine.SGLANG);

    static final String VLLM_BODY = """
            # HELP vllm:num_requests_running Number of requests in model execution batches.
            # TYPE vllm:num_requests_running gauge
            vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 2.0
            vllm:num_requests_running{engine="1",model_name="Qwen/Qwen3-8B"} 1.0
            # HELP vllm:num_requests_waiting Number of requests waiting to be processed.
            # TYPE vllm:num_requests_waiting gauge
            vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-8B"} 0.0
            vllm:num_requests_waiting{engine="1",model_name="Qwen/Qwen3-8B"} 4.0
            # HELP vllm:request_success_total Count of successfully processed requests.
            # TYPE vllm:request_success_total counter
            vllm:request_success_total{engine="0",finished_reason="stop",model_name="Qwen/Qwen3-8B"} 12.0
            vllm:request_success_created{engine="0",finished_reason="stop",model_name="Qwen/Qwen3-8B"} 1.7325e+09
            """;

    static final String SGLANG_BODY = """
            # HELP sglang:num_running_reqs The number of running requests.
            # TYPE sglang:num_running_reqs gauge
            sglang:num_running_reqs{dp_rank="0",engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 0.0
            sglang:num_running_reqs{dp_rank="1",engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 0.0
            sglang:num_queue_reqs{dp_rank="0",model_name="m",tp_rank="0"} 0.0
            sglang:num_prefill_bootstrap_queue_reqs{dp_rank="0",model_name="m",tp_rank="0"} 0.0
            sglang:num_prefill_inflight_queue_reqs{dp_rank="0",model_name="m",tp_rank="0"} 0.0
            sglang:num_decode_prealloc_queue_reqs{dp_rank="0",model_name="m",tp_rank="0"} 0.0
            sglang:num_decode_transfer_queue_reqs{dp_rank="0",model_name="m",tp_rank="0"} 0.0
            sglang:num_requests_total{model_name="m"} 5.0
            """;

    static Stream<Arguments> bodies() {
        return Stream.of(
                Arguments.of("vLLM, several series summed", VLLM_BODY, VLLM, new Reading.Busy(7)),
                Arguments.of("SGLang idle on every queue", SGLANG_BODY, SGLANG, new Reading.Idle()),
                // sglang v0.5.4 to v0.5.11 (python/sglang/srt/metrics/collector.py) name the prefill bootstrap queue so
                Arguments.of(
                        "SGLang before v0.5.12, its prefill queue under its old name",
                        SGLANG_BODY.replace("num_prefill_bootstrap_queue_reqs", "num_prefill_prealloc_queue_reqs"),
                        SGLANG,
                        new Reading.Idle()),
                Arguments.of(
                        "SGLang busy only in the old-named queue",
                        SGLANG_BODY.replace(
                                "sglang:num_prefill_bootstrap_queue_reqs{dp_rank=\"0\",model_name=\"m\",tp_rank=\"0\"} 0.0",
                                "sglang:num_prefill_prealloc_queue_reqs{dp_rank=\"0\",model_name=\"m\",tp_rank=\"0\"} 2.0"),
                        SGLANG,
                        new Reading.Busy(2)),
                Arguments.of("Windows line ends", VLLM_BODY.replace("\n", "\r\n"), VLLM, new Reading.Busy(7)),
                Arguments.of(
                        "blank lines and timestamps",
                        "\n\nvllm:num_requests_running 1 1712345678000\n\nvllm:num_requests_waiting{a=\"b\"} 0 1712345678000\n",
                        VLLM,
                        new Reading.Busy(1)),
                Arguments.of(
                        "exponents",
                        "vllm:num_requests_running 1e0\nvllm:num_requests_waiting 2.5E+1\n",
                        VLLM,
                        new Reading.Busy(26)),
                Arguments.of(
                        "label values with quotes, commas, braces and spaces",
                        "vllm:num_requests_running{model_name=\"a \\\"b\\\", {c}\",engine=\"0\"} 3\nvllm:num_requests_waiting{x=\"}\"} 0\n",
                        VLLM,
                        new Reading.Busy(3)),
                Arguments.of(
                        "a gauge missing",
                        VLLM_BODY.lines().filter(l -> !l.contains("waiting")).reduce("", (a, b) -> a + b + "\n"),
                        VLLM,
                        new Reading.Partial(List.of("vllm:num_requests_waiting"))),
                Arguments.of(
                        "NaN in a gauge",
                        "vllm:num_requests_running NaN\nvllm:num_requests_waiting 0\n",
                        VLLM,
                        new Reading.Failed("vllm:num_requests_running has value NaN, which is no count")),
                Arguments.of(
                        "+Inf in a gauge",
                        "vllm:num_requests_running +Inf\nvllm:num_requests_waiting 0\n",
                        VLLM,
                        new Reading.Failed("vllm:num_requests_running has value Infinity, which is no count")),
                Arguments.of(
                        "NaN elsewhere is ignored",
                        "other NaN\nvllm:num_requests_running 0\nvllm:num_requests_waiting 0\n",
                        VLLM,
                        new Reading.Idle()),
                Arguments.of(
                        "truncated last line of a gauge",
                        "vllm:num_requests_waiting 0\nvllm:num_requests_running{engine=\"0",
                        VLLM,
                        new Reading.Failed("line 2 is neither a comment nor a sample")),
                Arguments.of(
                        "truncated inside a name",
                        "vllm:num_requests_running 0\nvllm:num_requ",
                        VLLM,
                        new Reading.Failed("line 2 is neither a comment nor a sample")),
                Arguments.of(
                        "a chunk boundary inside a busy gauge's line, framing left in",
                        "vllm:num_requests_running{engine=\"0\"} 0.0\nvllm:num_requests_run\r\n1a\r\nning{engine=\"1\"} 3.0\n"
                                + "vllm:num_requests_waiting{engine=\"0\"} 0.0\n",
                        VLLM,
                        new Reading.Failed("line 2 is neither a comment nor a sample")),
                Arguments.of(
                        "chunk framing before the page",
                        "1daa\r\n" + VLLM_BODY,
                        VLLM,
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of(
                        "an unreadable line of another metric",
                        "other{a=\"b\" 1\n" + VLLM_BODY,
                        VLLM,
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of(
                        "a name starting with a digit",
                        "1vllm 0\n" + VLLM_BODY,
                        VLLM,
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of(
                        "a label without a quoted value",
                        "vllm:num_requests_running{engine=0} 1\nvllm:num_requests_waiting 0\n",
                        VLLM,
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of(
                        "a label list with a trailing comma and spaces",
                        "vllm:num_requests_running{ engine=\"0\" , } 1\nvllm:num_requests_waiting 0\n",
                        VLLM,
                        new Reading.Busy(1)),
                Arguments.of(
                        "not metrics",
                        "<html><body>Welcome to nginx!</body></html>",
                        VLLM,
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of(
                        "only comments",
                        "# HELP vllm:num_requests_running Requests.\n",
                        VLLM,
                        new Reading.Failed("the body holds no metrics")),
                Arguments.of("empty", "", VLLM, new Reading.Failed("the body holds no metrics")),
                Arguments.of(
                        "negative count",
                        "vllm:num_requests_running -1\nvllm:num_requests_waiting 0\n",
                        VLLM,
                        new Reading.Failed("vllm:num_requests_running has value -1.0, which is no count")),
                Arguments.of(
                        "a prefix of a gauge's name is another metric",
                        "vllm:num_requests_running_total 9\nvllm:num_requests_running 0\nvllm:num_requests_waiting 0\n",
                        VLLM,
                        new Reading.Idle()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bodies")
    void readsRealFormatBodies(String title, String body, List<InFlightGauges.Gauge> gauges, Reading expected) {
        assertThat(PrometheusText.read(body, gauges)).isEqualTo(expected);
    }

    static final List<String> VLLM_COUNTERS = RequestCounters.of(Engine.VLLM);

    /** vLLM 0.32.0's three request counters beside its gauges: every series of each, whatever the labels, summed. */
    static final String VLLM_COUNTED = VLLM_BODY + """
            # HELP vllm:prompt_tokens_total Number of prefill tokens processed.
            # TYPE vllm:prompt_tokens_total counter
            vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 300.0
            vllm:prompt_tokens_total{engine="1",model_name="Qwen/Qwen3-8B"} 100.0
            vllm:prompt_tokens_created{engine="0",model_name="Qwen/Qwen3-8B"} 1.7325e+09
            # HELP vllm:generation_tokens_total Number of generation tokens processed.
            # TYPE vllm:generation_tokens_total counter
            vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 1000.0
            vllm:request_success_total{engine="0",finished_reason="length",model_name="Qwen/Qwen3-8B"} 3.0
            """;

    static Stream<Arguments> counterPages() {
        return Stream.of(
                Arguments.of("every series of every counter", VLLM_COUNTED, Optional.of(1415.0)),
                Arguments.of(
                        "a counter missing",
                        VLLM_COUNTED
                                .lines()
                                .filter(l -> !l.startsWith("vllm:generation_tokens"))
                                .reduce("", (a, b) -> a + b + "\n"),
                        Optional.empty()),
                Arguments.of(
                        "a counter named only in a label",
                        VLLM_COUNTED.replace(
                                "vllm:generation_tokens_total{", "other{m=\"vllm:generation_tokens_total\","),
                        Optional.empty()),
                Arguments.of(
                        "its _created sample is not a count",
                        VLLM_COUNTED.replace(
                                "vllm:prompt_tokens_total{engine=\"1\"", "vllm:prompt_tokens_created{engine=\"1\""),
                        Optional.of(1315.0)),
                Arguments.of("NaN", VLLM_COUNTED.replace("} 1000.0", "} NaN"), Optional.empty()),
                Arguments.of("+Inf", VLLM_COUNTED.replace("} 1000.0", "} +Inf"), Optional.empty()),
                Arguments.of("negative", VLLM_COUNTED.replace("} 1000.0", "} -1"), Optional.empty()),
                Arguments.of("a cut page", VLLM_COUNTED + "vllm:prompt_tok", Optional.empty()),
                Arguments.of("no page", "", Optional.empty()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("counterPages")
    void requestCountersAreSummedOnlyWhenEveryOneIsThereAndCounts(
            String title, String body, Optional<Double> expected) {
        assertThat(PrometheusText.total(body, VLLM_COUNTERS)).isEqualTo(expected);
    }

    @Property(tries = 1000)
    void requestCountersNeverThrowOnRandomText(@ForAll String body) {
        assertThat(PrometheusText.total(body, VLLM_COUNTERS)).isNotNull();
    }

    @Test
    void nullBodyIsAFailedRead() {
        assertThat(PrometheusText.read(null, VLLM)).isInstanceOf(Reading.Failed.class);
    }

    @Property(tries = 2000)
    void neverThrowsOnRandomText(@ForAll String body) {
        assertThat(PrometheusText.read(body, VLLM)).isNotNull();
    }

    @Property(tries = 2000)
    void neverThrowsAndNeverCallsAMutatedBodyIdleUnlessItStillSaysSo(@ForAll("mutatedBodies") String body) {
        Reading reading = PrometheusText.read(body, VLLM);

        assertThat(reading).isNotNull();
        if (reading instanceof Reading.Idle) {
            assertThat(body).contains("vllm:num_requests_running").contains("vllm:num_requests_waiting");
        }
    }

    /** A chunk-size line (framing a reader failed to remove) put anywhere in a busy page never lets it read idle. */
    @Property(tries = 1000)
    void chunkFramingAnywhereMakesTheReadFailed(@ForAll("offsetsInAPage") int at, @ForAll("chunkSizes") String size) {
        String framed = VLLM_BODY.substring(0, at) + "\r\n" + size + "\r\n" + VLLM_BODY.substring(at);

        assertThat(PrometheusText.read(framed, VLLM)).isInstanceOf(Reading.Failed.class);
    }

    @Provide
    Arbitrary<Integer> offsetsInAPage() {
        return Arbitraries.integers().between(0, VLLM_BODY.length());
    }

    @Provide
    Arbitrary<String> chunkSizes() {
        return Arbitraries.integers().between(1, 1 << 20).map(Integer::toHexString);
    }

    @Provide
    Arbitrary<String> mutatedBodies() {
        return Arbitraries.integers()
                .between(0, VLLM_BODY.length() - 1)
                .list()
                .ofMaxSize(8)
                .flatMap(cuts -> Arbitraries.strings()
                        .ofMaxLength(6)
                        .list()
                        .ofSize(cuts.size())
                        .map(inserts -> {
                            StringBuilder body = new StringBuilder(VLLM_BODY
                                    .replace("2.0", "0")
                                    .replace("1.0", "0")
                                    .replace("4.0", "0"));
                            for (int i = 0; i < cuts.size(); i++) {
                                int at = Math.min(cuts.get(i), body.length());
                                int end = Math.min(
                                        body.length(), at + inserts.get(i).length());
                                body.replace(at, end, inserts.get(i));
                            }
                            return body.toString();
                        }));
    }
}
