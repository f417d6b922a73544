package dev.ebb.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.read.PrometheusText;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.read.RequestCounters;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Real vLLM for CPU ({@link RealVllm#RELEASE}) under what the operator relies on: the gauges' names, labels and
 * framing, how soon they show a request, and the drain hook and the reader against its own pages. Each figure is
 * printed as measured.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RealVllmIT {
    private RealVllm vllm;

    @BeforeAll
    void start() throws Exception {
        Assumptions.assumeTrue(RealVllm.installed(), "make engine-env installs real vLLM first");
        vllm = RealVllm.start();
        System.out.printf(
                "vLLM %s for CPU: /health 200 %.1f s after start%n",
                RealVllm.RELEASE, vllm.startedIn.toMillis() / 1000.0);
    }

    @AfterAll
    void stop() {
        if (vllm != null) {
            vllm.close();
        }
    }

    /**
     * The request counters a retirement without a router sums beside the gauges are on the page while the engine is
     * idle, and one generation that ends between two reads moves their sum.
     */
    @Test
    void theRequestCountersAreOnThePageAndAGenerationBetweenTwoReadsMovesThem() throws Exception {
        Optional<Double> before = PrometheusText.total(vllm.get("/metrics").body(), RequestCounters.of(Engine.VLLM));
        Stream ended =
                Stream.start(vllm.uri("/v1/completions"), RealVllm.prompt(3), 8).get(300, TimeUnit.SECONDS);

        assertThat(ended.complete()).as("the stream: %s", ended).isTrue();
        assertThat(before)
                .as("%s on the page before", RequestCounters.of(Engine.VLLM))
                .isPresent();
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(
                                PrometheusText.total(vllm.get("/metrics").body(), RequestCounters.of(Engine.VLLM)))
                        .isPresent()
                        .get()
                        .isNotEqualTo(before.get()));
        System.out.printf(
                "%s's request counters: %.0f before one generation of 8 tokens, %.0f after%n",
                Engine.VLLM,
                before.get(),
                PrometheusText.total(vllm.get("/metrics").body(), RequestCounters.of(Engine.VLLM))
                        .orElseThrow());
    }

    /** Both gauges, one series for the one engine core, labelled engine and model_name, in a body of known length. */
    @Test
    void theMetricsPageCarriesBothGaugesPerEngineAndAContentLength() throws IOException {
        HttpResponse<String> page = vllm.get("/metrics");

        assertThat(page.headers().firstValue("Content-Length"))
                .as("framed with a length, not chunked")
                .isPresent();
        assertThat(page.headers().firstValue("Transfer-Encoding")).isEmpty();
        assertThat(page.body())
                .contains(
                        "vllm:num_requests_running{engine=\"0\",model_name=\"tiny\"} 0.0",
                        "vllm:num_requests_waiting{engine=\"0\",model_name=\"tiny\"} 0.0",
                        "# TYPE vllm:num_requests_running gauge");
        assertThat(vllm.read()).isEqualTo(new Reading.Idle());
    }

    /**
     * A request shows in the gauges only once the API server has tokenized it. The retirement waits 5 s after the
     * router lets a replica go before its reads count, and the hook 5 s after a delete: both must cover this.
     */
    @Test
    void aRequestShowsInTheGaugesWellWithinTheMarginAndLeavesThemAsItEnds() throws Exception {
        for (int words : new int[] {3, 2000, 6000}) {
            CompletableFuture<Stream> stream = Stream.start(vllm.uri("/v1/completions"), RealVllm.prompt(words), 200);
            long seen = vllm.firstBusy(stream);
            Stream ended = stream.get(120, TimeUnit.SECONDS);
            long zero = 0;
            while (zero == 0) {
                if (vllm.read() instanceof Reading.Idle) {
                    zero = System.nanoTime();
                }
            }
            double lag = (seen - ended.sentNanos()) / 1e9;
            System.out.printf(
                    "prompt of %d words: response headers after %.3f s, gauges show it after %.3f s, back to 0 %.3f s after its end%n",
                    words,
                    (ended.headersNanos() - ended.sentNanos()) / 1e9,
                    lag,
                    Math.max(0, zero - ended.endedNanos()) / 1e9);
            assertThat(ended.complete()).as("the stream itself: %s", ended).isTrue();
            assertThat(seen).as("the gauges showed the request before it ended").isPositive();
            assertThat(lag).isLessThan(DrainTimelines.SETTLE);
            if (words == 6000) {
                // the half second of tokenizing leaves a wide gap; a short prompt's few milliseconds would make it a
                // race
                assertThat(ended.headersNanos())
                        .as("vLLM answers with its headers before it has tokenized the prompt")
                        .isLessThan(seen);
            }
        }
    }

    /**
     * The member read as the operator runs it: read-metrics.py in the member's container, its output parsed by the
     * reader, on the engine's own page. Two streams show as two in flight, and the member is idle again once they end.
     */
    @Test
    void theMemberReadTellsBusyFromIdleOnTheEnginesOwnPage() throws Exception {
        try (MemberRead member = new MemberRead(vllm)) {
            assertThat(member.read()).isEqualTo(new Reading.Idle());

            List<CompletableFuture<Stream>> streams = List.of(
                    Stream.start(vllm.uri("/v1/completions"), RealVllm.prompt(3), 1000),
                    Stream.start(vllm.uri("/v1/completions"), RealVllm.prompt(5), 1000));
            await().atMost(Duration.ofSeconds(10)).until(() -> member.read().equals(new Reading.Busy(2)));
            for (CompletableFuture<Stream> stream : streams) {
                Stream ended = stream.get(120, TimeUnit.SECONDS);
                assertThat(ended.complete()).as("the stream: %s", ended).isTrue();
            }
            await().atMost(Duration.ofSeconds(2)).until(() -> member.read().equals(new Reading.Idle()));
        }
    }

    /** The hook as the renderer builds it, against the real engine: it returns on two idle reads, and waits out a stream. */
    @Test
    void theDrainHookReturnsOnTwoIdleReadsAndHoldsWhileAStreamRuns() throws Exception {
        EngineHook idle = EngineHook.run(vllm);
        assertThat(idle.last()).contains("idle on two consecutive reads");
        assertThat(idle.seconds()).isBetween(5.5, 9.0);

        // about 12 s at the 100 tokens a second seen here, 18 s at the 65 seen on a busier machine: running at the
        // hook's first read, 5 s in, and ended before its last may start, 25 s in (600 tokens once ended before the
        // first)
        CompletableFuture<Stream> stream = Stream.start(vllm.uri("/v1/completions"), RealVllm.prompt(3), 1200);
        await().atMost(Duration.ofSeconds(10)).until(() -> vllm.read() instanceof Reading.Busy);
        EngineHook busy = EngineHook.run(vllm);
        Stream ended = stream.get(60, TimeUnit.SECONDS);

        assertThat(ended.complete()).as("the stream: %s", ended).isTrue();
        assertThat(busy.lines()).anyMatch(line -> line.contains("busy (sum 1)"));
        assertThat(busy.last()).contains("idle on two consecutive reads");
        assertThat(busy.returnedNanos())
                .as("the hook returned after the stream ended")
                .isGreaterThan(ended.endedNanos());
        System.out.printf(
                "drain hook: idle engine %.1f s; engine with a stream %.1f s%n", idle.seconds(), busy.seconds());
    }
}
