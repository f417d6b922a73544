package dev.ebb.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What real vLLM for CPU ({@link RealVllm#RELEASE}) does on SIGTERM, with its default --shutdown-timeout of 0 and with
 * one that outlasts the stream it holds. Each figure is printed as measured.
 */
class RealVllmSigtermIT {
    private static final int LONG = 3000;
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    @BeforeAll
    static void installed() {
        Assumptions.assumeTrue(RealVllm.installed(), "make engine-env installs real vLLM first");
    }

    /**
     * The default stops generating at SIGTERM: the engine core is killed at once. What the client then sees varies
     * from run to run: an error event and [DONE], a stream that just ends, or, as uvicorn waits for open connections to
     * close, a stream that stalls until the process is killed (the kubelet's SIGKILL at the grace). Every way, cut.
     */
    @Test
    void withoutAShutdownTimeoutGenerationStopsAtSigterm() throws Exception {
        try (RealVllm vllm = RealVllm.start()) {
            AtomicInteger progress = new AtomicInteger();
            CompletableFuture<Stream> stream = streamUnderWay(vllm, progress);
            long sigterm = System.nanoTime();
            vllm.sigterm();
            Thread.sleep(3000);
            int atThree = progress.get();
            Thread.sleep(3000);
            int atSix = progress.get();
            boolean exited = vllm.exitsWithin(Duration.ofSeconds(1));
            String late = lateRequest(vllm.uri("/v1/completions"));
            Optional<Stream> ended = stream.isDone() ? Optional.of(stream.get()) : Optional.empty();

            System.out.printf(
                    "--shutdown-timeout 0: %d token events for %d tokens by 3 s after SIGTERM, %d by 6 s; the stream %s; the server %s; a new request: %s%n",
                    atThree,
                    LONG,
                    atSix,
                    ended.map(s -> "ended " + (s.errorEvent() != null ? "with an error event" : "without one")
                                    + (s.done() ? " and [DONE]" : ""))
                            .orElse("stalled, open"),
                    exited ? "exited" : "still running",
                    late);
            assertThat(atSix).as("no token after SIGTERM").isEqualTo(atThree).isLessThan(LONG);
            ended.ifPresent(
                    s -> assertThat(s.complete()).as("the stream: %s", s).isFalse());
            assertThat(late).as("nothing new is taken").doesNotStartWith("200");
        }
    }

    /**
     * With --shutdown-timeout longer than what it holds, the stream runs to its end; a request arriving meanwhile is
     * refused with HTTP 500, while /health still answers 200; the server exits once the stream is done.
     */
    @Test
    void withAShutdownTimeoutAStreamFinishesANewRequestIsRefusedAndTheServerGoesWhenItIsDone() throws Exception {
        try (RealVllm vllm = RealVllm.start("--shutdown-timeout", "60")) {
            CompletableFuture<Stream> stream = streamUnderWay(vllm);
            long sigterm = System.nanoTime();
            vllm.sigterm();
            Thread.sleep(500);
            String late = lateRequest(vllm.uri("/v1/completions"));
            int health = vllm.get("/health").statusCode();
            Stream finished = stream.get(90, TimeUnit.SECONDS);
            boolean exited = vllm.exitsWithin(Duration.ofSeconds(30));
            double exit = (System.nanoTime() - sigterm) / 1e9;

            System.out.printf(
                    "--shutdown-timeout 60: stream ended %.1f s after SIGTERM, %d token events for %d tokens; exit %.1f s after SIGTERM, "
                            + "%.1f s after the stream; a request 0.5 s after SIGTERM: %s; /health meanwhile: %d%n",
                    (finished.endedNanos() - sigterm) / 1e9,
                    finished.tokens(),
                    LONG,
                    exit,
                    (System.nanoTime() - finished.endedNanos()) / 1e9,
                    late,
                    health);
            assertThat(finished.complete()).as("the stream: %s", finished).isTrue();
            assertThat(late).startsWith("500 ").contains("cannot schedule new futures after shutdown");
            assertThat(health).isEqualTo(200);
            assertThat(exited).isTrue();
        }
    }

    private static CompletableFuture<Stream> streamUnderWay(RealVllm vllm) throws InterruptedException {
        return streamUnderWay(vllm, new AtomicInteger());
    }

    private static CompletableFuture<Stream> streamUnderWay(RealVllm vllm, AtomicInteger progress)
            throws InterruptedException {
        CompletableFuture<Stream> stream =
                Stream.start(vllm.uri("/v1/completions"), RealVllm.MODEL_NAME, RealVllm.prompt(3), LONG, progress);
        Thread.sleep(2000);
        assertThat(stream).isNotDone();
        return stream;
    }

    /** A short completion sent now, as its status and body or how its connection failed. */
    private static String lateRequest(URI completions) {
        try {
            HttpResponse<String> answer = HTTP.send(
                    HttpRequest.newBuilder(completions)
                            .header("Content-Type", "application/json")
                            .timeout(Duration.ofSeconds(10))
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"model\":\"" + RealVllm.MODEL_NAME + "\",\"prompt\":\"w1\",\"max_tokens\":5}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return answer.statusCode() + " " + answer.body();
        } catch (IOException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
