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
 * Real SGLang for CPU ({@link RealSglang#RELEASE}) under what the operator relies on: every queue gauge it reads, how
 * the page is framed, how soon the gauges show a request and how late they let it go, and the drain hook against its
 * pages. Each figure is printed as measured.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RealSglangIT {
    /** The scheduler writes its gauges while idle once 30 s have passed since the last write; a margin on top. */
    private static final Duration IDLE_WRITE = Duration.ofSeconds(40);

    private RealSglang sglang;

    @BeforeAll
    void start() throws Exception {
        Assumptions.assumeTrue(RealSglang.installed(), "make engine-env installs real SGLang first");
        sglang = RealSglang.start();
        System.out.printf(
                "SGLang %s for CPU: /health 200 %.1f s after start%n",
                RealSglang.RELEASE, sglang.startedIn.toMillis() / 1000.0);
    }

    @AfterAll
    void stop() {
        if (sglang != null) {
            sglang.close();
        }
    }

    /**
     * The request counters a retirement without a router sums beside the gauges are on the page while the engine is
     * idle, and one generation that ends between two reads moves their sum.
     */
    @Test
    void theRequestCountersAreOnThePageAndAGenerationBetweenTwoReadsMovesThem() throws Exception {
        Optional<Double> before =
                PrometheusText.total(sglang.get("/metrics").body(), RequestCounters.of(Engine.SGLANG));
        Stream ended = Stream.start(sglang.uri("/v1/completions"), RealEngine.prompt(3), 8)
                .get(300, TimeUnit.SECONDS);

        assertThat(ended.complete()).as("the stream: %s", ended).isTrue();
        assertThat(before)
                .as("%s on the page before", RequestCounters.of(Engine.SGLANG))
                .isPresent();
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(
                                PrometheusText.total(sglang.get("/metrics").body(), RequestCounters.of(Engine.SGLANG)))
                        .isPresent()
                        .get()
                        .isNotEqualTo(before.get()));
        System.out.printf(
                "%s's request counters: %.0f before one generation of 8 tokens, %.0f after%n",
                Engine.SGLANG,
                before.get(),
                PrometheusText.total(sglang.get("/metrics").body(), RequestCounters.of(Engine.SGLANG))
                        .orElseThrow());
    }

    /** Every queue gauge the operator sums, one series for the one scheduler, in a chunked body. */
    @Test
    void theMetricsPageCarriesEveryQueueGaugeChunked() throws IOException {
        HttpResponse<String> page = sglang.get("/metrics");

        assertThat(page.headers().firstValue("Transfer-Encoding")).hasValue("chunked");
        assertThat(page.headers().firstValue("Content-Length")).isEmpty();
        String labels = "{engine_type=\"unified\",model_name=\"tiny\",moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"}";
        assertThat(page.body())
                .contains(
                        "# TYPE sglang:num_running_reqs gauge",
                        "sglang:num_running_reqs" + labels,
                        "sglang:num_queue_reqs" + labels,
                        "sglang:num_prefill_bootstrap_queue_reqs" + labels,
                        "sglang:num_prefill_inflight_queue_reqs" + labels,
                        "sglang:num_decode_prealloc_queue_reqs" + labels,
                        "sglang:num_decode_transfer_queue_reqs" + labels);
        await().atMost(IDLE_WRITE).until(() -> sglang.read().equals(new Reading.Idle()));
    }

    /**
     * A request shows in the gauges at its first prefill; once it has ended they keep showing it until the scheduler
     * writes them again, which an idle one does only after a while.
     */
    @Test
    void aRequestShowsInTheGaugesAtOnceAndLeavesThemLate() throws Exception {
        await().atMost(IDLE_WRITE).until(() -> sglang.read().equals(new Reading.Idle()));
        CompletableFuture<Stream> stream = Stream.start(sglang.uri("/v1/completions"), RealEngine.prompt(3), 200);
        long seen = sglang.firstBusy(stream);
        Stream ended = stream.get(300, TimeUnit.SECONDS);
        await().atMost(IDLE_WRITE)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> sglang.read().equals(new Reading.Idle()));
        long idle = System.nanoTime();

        System.out.printf(
                "SGLang: 200 tokens in %.1f s; the gauges show the request %.3f s after it is sent, and go back to 0 %.1f s after its end%n",
                (ended.endedNanos() - ended.sentNanos()) / 1e9,
                (seen - ended.sentNanos()) / 1e9,
                (idle - ended.endedNanos()) / 1e9);
        assertThat(ended.complete()).as("the stream itself: %s", ended).isTrue();
        assertThat(seen).as("the gauges showed the request before it ended").isPositive();
        assertThat((seen - ended.sentNanos()) / 1e9).isLessThan(DrainTimelines.SETTLE);
    }

    /**
     * The member read as the operator runs it, on the engine's own page: two streams show as two in flight, and the
     * member reads idle again once the scheduler has written its gauges after their end.
     */
    @Test
    void theMemberReadTellsBusyFromIdleOnTheEnginesOwnPage() throws Exception {
        try (MemberRead member = new MemberRead(sglang)) {
            await().atMost(IDLE_WRITE).until(() -> member.read().equals(new Reading.Idle()));

            List<CompletableFuture<Stream>> streams = List.of(
                    Stream.start(sglang.uri("/v1/completions"), RealEngine.prompt(3), 150),
                    Stream.start(sglang.uri("/v1/completions"), RealEngine.prompt(5), 150));
            await().atMost(Duration.ofSeconds(20)).until(() -> member.read().equals(new Reading.Busy(2)));
            for (CompletableFuture<Stream> stream : streams) {
                Stream ended = stream.get(300, TimeUnit.SECONDS);
                assertThat(ended.complete()).as("the stream: %s", ended).isTrue();
            }
            await().atMost(IDLE_WRITE).until(() -> member.read().equals(new Reading.Idle()));
        }
    }

    /** The hook as the renderer builds it, against the real engine: it waits out a stream and the gauges' late write. */
    @Test
    void theDrainHookHoldsWhileAStreamRunsAndReturnsOnceTheGaugesSayIdle() throws Exception {
        await().atMost(IDLE_WRITE).until(() -> sglang.read().equals(new Reading.Idle()));
        EngineHook idle = EngineHook.run(sglang);
        assertThat(idle.last()).contains("idle on two consecutive reads");

        CompletableFuture<Stream> stream = Stream.start(sglang.uri("/v1/completions"), RealEngine.prompt(3), 100);
        await().atMost(Duration.ofSeconds(10)).until(() -> sglang.read() instanceof Reading.Busy);
        EngineHook busy = EngineHook.run(sglang);
        Stream ended = stream.get(120, TimeUnit.SECONDS);

        System.out.printf(
                "SGLang drain hook: idle engine %.1f s; engine with a stream %.1f s, the stream %.1f s; hook's last line: %s%n",
                idle.seconds(), busy.seconds(), (ended.endedNanos() - ended.sentNanos()) / 1e9, busy.last());
        assertThat(ended.complete()).as("the stream: %s", ended).isTrue();
        assertThat(busy.lines()).anyMatch(line -> line.contains("busy (sum 1)"));
        assertThat(busy.returnedNanos())
                .as("the hook returned after the stream ended")
                .isGreaterThan(ended.endedNanos());
    }
}
