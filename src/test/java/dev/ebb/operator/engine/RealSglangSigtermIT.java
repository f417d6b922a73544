package dev.ebb.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What real SGLang for CPU ({@link RealSglang#RELEASE}) does on SIGTERM. Each figure is printed as measured. */
class RealSglangSigtermIT {
    private static final int LONG = 300;

    @BeforeAll
    static void installed() {
        Assumptions.assumeTrue(RealSglang.installed(), "make engine-env installs real SGLang first");
    }

    /**
     * It drains without a bound: /health answers 503 at once, yet a request that arrives meanwhile is taken and served
     * like the one in flight, each to its end; the server exits a few seconds after the last, at the next of the
     * watchdog's 5 s looks.
     */
    @Test
    void afterSigtermHealthSays503AndEveryStreamOldOrNewRunsToItsEnd() throws Exception {
        try (RealSglang sglang = RealSglang.start()) {
            AtomicInteger progress = new AtomicInteger();
            CompletableFuture<Stream> held = Stream.start(
                    sglang.uri("/v1/completions"), RealEngine.MODEL_NAME, RealEngine.prompt(3), LONG, progress);
            while (progress.get() == 0 && !held.isDone()) {
                Thread.sleep(20);
            }
            long sigterm = System.nanoTime();
            sglang.sigterm();
            Thread.sleep(500);
            int health = sglang.get("/health").statusCode();
            CompletableFuture<Stream> late = Stream.start(
                    sglang.uri("/v1/completions"), RealEngine.MODEL_NAME, RealEngine.prompt(3), 5, new AtomicInteger());
            Stream finished = held.get(10, TimeUnit.MINUTES);
            boolean exited = sglang.exitsWithin(Duration.ofSeconds(60));
            double exit = (System.nanoTime() - sigterm) / 1e9;
            Stream lateEnded = late.get(60, TimeUnit.SECONDS);

            System.out.printf(
                    "SGLang SIGTERM: /health %d 0.5 s after; the stream ended %.1f s after SIGTERM (%s); exit %.1f s after SIGTERM, "
                            + "%.1f s after the stream; a request 0.5 s after SIGTERM: %s%n",
                    health,
                    (finished.endedNanos() - sigterm) / 1e9,
                    finished,
                    exit,
                    (System.nanoTime() - finished.endedNanos()) / 1e9,
                    lateEnded);
            assertThat(health).isEqualTo(503);
            assertThat(finished.complete()).as("the stream: %s", finished).isTrue();
            assertThat(lateEnded.complete())
                    .as("the late request: %s", lateEnded)
                    .isTrue();
            assertThat(exited).isTrue();
        }
    }
}
