package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The fake engines behave as the released engines do where it matters to a drain: SIGTERM, loading, lagging gauges. */
class ReleasedEngineTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private FakeEngine engine;

    @AfterEach
    void stop() {
        if (engine != null) {
            engine.close();
        }
    }

    private FakeEngine start(Engine kind, EngineBehaviour behaviour) throws IOException {
        engine = FakeEngine.start(kind, ADDRESSES.next(), 8000, "m", new EngineFaults(), behaviour, null);
        return engine;
    }

    private static EngineBehaviour vllm(String tag, String... flags) {
        List<String> command = new ArrayList<>(List.of("vllm", "serve", "m", "--port", "8000"));
        command.addAll(List.of(flags));
        return EngineBehaviour.ofContainer(Engine.VLLM, "vllm/vllm-openai:" + tag, command);
    }

    private CompletableFuture<LoadGenerator.Request> stream(int tokens, long tokenMs) {
        FakeEngine e = engine;
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget("p", URI.create("http://" + e.host() + ":" + e.port()))),
                1,
                tokens,
                Duration.ofMillis(tokenMs));
        return CompletableFuture.supplyAsync(load::send);
    }

    private int health() throws Exception {
        return http.send(
                        HttpRequest.newBuilder(engine.uri("/health"))
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    private long inFlightOnPage() throws Exception {
        String page = http.send(
                        HttpRequest.newBuilder(engine.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString())
                .body();
        long sum = 0;
        for (String gauge : InFlightGauges.of(engine.engine()).stream()
                .flatMap(g -> g.names().stream())
                .toList()) {
            Matcher m = Pattern.compile("(?m)^" + Pattern.quote(gauge) + "\\{[^}]*\\} ([0-9.]+)$")
                    .matcher(page);
            while (m.find()) {
                sum += (long) Double.parseDouble(m.group(1));
            }
        }
        return sum;
    }

    @Test
    void vllmBeforeGracefulShutdownAbortsWhatItHoldsEvenWithTheFlag() throws Exception {
        start(Engine.VLLM, vllm("v0.17.1", "--shutdown-timeout", "60"));
        CompletableFuture<LoadGenerator.Request> held = stream(200, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);

        engine.sigterm();

        assertThat(engine.exited()).isTrue();
        assertThat(held.get().outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    @Test
    void vllmWithGracefulShutdownButNoTimeoutStillAbortsAtOnce() throws Exception {
        start(Engine.VLLM, vllm("v0.18.0"));
        CompletableFuture<LoadGenerator.Request> held = stream(200, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);

        engine.sigterm();

        assertThat(held.get().outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    @Test
    void vllmWithAShutdownTimeoutRefusesNewWorkWith500StaysHealthyFinishesWhatItHoldsAndExits() throws Exception {
        start(Engine.VLLM, vllm("v0.18.0", "--shutdown-timeout", "10"));
        CompletableFuture<LoadGenerator.Request> held = stream(40, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);

        engine.sigterm();

        assertThat(engine.state()).isEqualTo(FakeEngine.State.DRAINING);
        assertThat(health()).isEqualTo(200);
        LoadGenerator.Request refused = stream(3, 1).get();
        assertThat(refused.outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED);
        assertThat(refused.why()).isEqualTo("HTTP 500");
        assertThat(held.get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        await().atMost(Duration.ofSeconds(2)).until(engine::exited);
    }

    /**
     * A stream that outlasts the timeout stops getting tokens there and stays open, and so does the server, until it
     * is killed; the stream is then cut. Observed at vLLM 0.32.0 (docs/contributing/real-tiers.md, the engine tier).
     */
    @Test
    void vllmStopsGeneratingAtItsShutdownTimeoutAndStaysUntilKilled() throws Exception {
        start(Engine.VLLM, vllm("v0.18.0", "--shutdown-timeout=1"));
        // 2 s of tokens: it would be over well within the wait below if the engine went on generating
        CompletableFuture<LoadGenerator.Request> held = stream(100, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);

        engine.sigterm();

        await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(5))
                .until(() -> !held.isDone() && !engine.exited());
        engine.kill();
        assertThat(held.get(5, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    /** As SGLang 0.5.15 did on CPU (RealSglangSigtermIT): 503 from /health, yet a new request is served like the rest. */
    @Test
    void sglangDrainsWithoutBoundAnswersHealthWith503AndStillServesANewRequest() throws Exception {
        start(
                Engine.SGLANG,
                EngineBehaviour.ofContainer(
                        Engine.SGLANG, "lmsysorg/sglang:v0.5.4", List.of("python3", "-m", "sglang.launch_server")));
        CompletableFuture<LoadGenerator.Request> held = stream(150, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);

        engine.sigterm();

        assertThat(health()).isEqualTo(503);
        assertThat(stream(3, 1).get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(held.get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        await().atMost(Duration.ofSeconds(2)).until(engine::exited);
    }

    /** Sends SIGTERM while a stream of 0.5 s runs; returns, by System.nanoTime(), once the stream has completed. */
    private long sigtermDuringAStreamThatCompletes() throws Exception {
        CompletableFuture<LoadGenerator.Request> held = stream(25, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);
        engine.sigterm();
        assertThat(held.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        return System.nanoTime();
    }

    /** vLLM 0.32.0 on CPU exited 4 to 7.6 s after its last stream ended; the fake takes 6 s. */
    @Test
    void vllmExitingAsObservedStaysUpForItsTeardownAfterItsLastStreamEnds() throws Exception {
        start(Engine.VLLM, vllm("v0.32.0", "--shutdown-timeout", "10").timedAsObserved(Engine.VLLM));
        long ended = sigtermDuringAStreamThatCompletes();

        await().during(Duration.ofMillis(5_500)).atMost(Duration.ofSeconds(8)).until(() -> !engine.exited());
        await().atMost(Duration.ofSeconds(5)).until(engine::exited);
        // the client may see its stream's end a little after the engine does: a margin of 0.5 s for that
        assertThat(Duration.ofNanos(System.nanoTime() - ended)).isGreaterThanOrEqualTo(Duration.ofMillis(5_500));
    }

    /**
     * SGLang 0.5.15 on CPU exited 4.5 to 9.3 s after its last stream: its watchdog finds the drain over at its next
     * 5 s look, and its schedulers then take about 4.4 s to stop.
     */
    @Test
    void sglangExitingAsObservedLeavesAtItsWatchdogsNextLookAndATeardownAfterItsLastStream() throws Exception {
        start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).timedAsObserved(Engine.SGLANG));
        long ended = sigtermDuringAStreamThatCompletes();

        await().during(Duration.ofMillis(4_200)).atMost(Duration.ofSeconds(6)).until(() -> !engine.exited());
        await().atMost(Duration.ofSeconds(10)).until(engine::exited);
        // the teardown at least, less the client's lag behind the engine; the watchdog's look and a loaded machine at
        // most
        assertThat(Duration.ofNanos(System.nanoTime() - ended))
                .isBetween(Duration.ofMillis(3_900), Duration.ofSeconds(12));
    }

    /** A request taken during the teardown, after the watchdog found the drain over, goes with the process. */
    @Test
    void aRequestSglangTakesDuringItsTeardownIsCutByItsExit() throws Exception {
        start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).exitAfterDrain(Duration.ofSeconds(3)));

        engine.sigterm();
        CompletableFuture<LoadGenerator.Request> late = stream(400, 20);

        assertThat(late.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
        assertThat(engine.exited()).isTrue();
    }

    @Test
    void vllmRefusesConnectionsUntilItsModelIsLoaded() throws Exception {
        start(Engine.VLLM, EngineBehaviour.of(Engine.VLLM).loadDelay(Duration.ofMillis(1500)));

        assertThat(engine.state()).isEqualTo(FakeEngine.State.LOADING);
        assertThat(catchThrowable(this::health)).isInstanceOf(ConnectException.class);
        await().atMost(Duration.ofSeconds(4))
                .pollInterval(Duration.ofMillis(100))
                .ignoreExceptions()
                .until(() -> health() == 200);
        assertThat(engine.state()).isEqualTo(FakeEngine.State.SERVING);
        assertThat(stream(3, 1).get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
    }

    @Test
    void sglangAnswers503UntilItsModelIsLoaded() throws Exception {
        start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).loadDelay(Duration.ofMillis(1500)));

        assertThat(health()).isEqualTo(503);
        assertThat(stream(3, 1).get().outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED);
        await().atMost(Duration.ofSeconds(4))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> health() == 200);
        assertThat(stream(3, 1).get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aSigtermWhileLoadingEndsTheEngineAtOnce(Engine kind) throws Exception {
        start(kind, EngineBehaviour.of(kind).loadDelay(Duration.ofSeconds(5)));

        engine.sigterm();

        assertThat(engine.exited()).isTrue();
    }

    @Test
    void sglangsLaggingGaugeStillShowsARequestThatEndedUntilItsLoggerWritesAgain() throws Exception {
        start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).busyGaugeLag(Duration.ofSeconds(3)));
        CompletableFuture<LoadGenerator.Request> held = stream(20, 20);
        held.get();
        long idleAt = System.nanoTime();

        await().atMost(Duration.ofSeconds(8))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> inFlightOnPage() == 0);
        Duration shownIdleAfter = Duration.ofNanos(System.nanoTime() - idleAt);

        assertThat(engine.counted()).isZero();
        // the request may have come and gone between two writes, never seen; seen or not, it is gone within one lag
        // (and a second of scheduling on a loaded machine)
        assertThat(shownIdleAfter).isLessThanOrEqualTo(Duration.ofMillis(4_000));
    }

    @Test
    void sglangsLaggingGaugeShowsTheEngineIdleForUpToALagAfterARequestArrives() throws Exception {
        start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).busyGaugeLag(Duration.ofSeconds(2)));
        stream(200, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.counted() == 1);
        long arrived = System.nanoTime();

        await().atMost(Duration.ofSeconds(6))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> inFlightOnPage() == 1);

        // within one lag, and a second of scheduling on a loaded machine
        assertThat(Duration.ofNanos(System.nanoTime() - arrived)).isLessThanOrEqualTo(Duration.ofMillis(3_000));
    }

    /**
     * As SGLang 0.5.15 did on CPU, in shorter figures: a request shows once the scheduler has written its gauges, and
     * once the engine is idle the page keeps the last request until the idle write.
     */
    @Test
    void sglangsGaugesAsWrittenShowARequestAfterTheWriteDelayAndItsEndOnlyAtTheIdleWrite() throws Exception {
        start(
                Engine.SGLANG,
                EngineBehaviour.of(Engine.SGLANG)
                        .gaugeWriteDelay(Duration.ofMillis(800))
                        .idleWriteAfter(Duration.ofSeconds(3)));
        CompletableFuture<LoadGenerator.Request> held = stream(60, 20);
        await().atMost(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> engine.counted() == 1);
        long arrived = System.nanoTime();

        assertThat(inFlightOnPage()).as("not written yet").isZero();
        await().atMost(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> inFlightOnPage() == 1);
        // less the poll that saw it counted
        assertThat(Duration.ofNanos(System.nanoTime() - arrived)).isGreaterThanOrEqualTo(Duration.ofMillis(700));

        held.get();
        long ended = System.nanoTime();
        // the client reads the last chunk before the engine's thread counts the request done: on a loaded machine
        // that can take a moment (seen: still 1 right after the stream ended)
        await().atMost(Duration.ofSeconds(1))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> engine.counted() == 0);
        await().during(Duration.ofMillis(2_500)).atMost(Duration.ofSeconds(3)).until(() -> inFlightOnPage() == 1);
        await().atMost(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> inFlightOnPage() == 0);
        assertThat(Duration.ofNanos(System.nanoTime() - ended)).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void withoutALagTheGaugeFollowsEveryRequestAtOnce() throws Exception {
        start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG));
        CompletableFuture<LoadGenerator.Request> held = stream(100, 20);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.counted() == 1);

        assertThat(inFlightOnPage()).isEqualTo(1);
        held.get();
        // at once, less the moment the engine's thread takes to count the request done after its last chunk
        await().atMost(Duration.ofMillis(500))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> inFlightOnPage() == 0);
    }

    @Test
    void vllmHoldsATokenizingRequestOverHttpBeforeEitherGaugeCountsIt() throws Exception {
        start(Engine.VLLM, EngineBehaviour.of(Engine.VLLM).tokenizing(Duration.ofMillis(1500)));
        CompletableFuture<LoadGenerator.Request> held = stream(20, 20);
        await().atMost(Duration.ofSeconds(1)).until(() -> engine.inFlight() == 1);

        assertThat(engine.counted()).isZero();
        assertThat(inFlightOnPage()).isZero();
        await().atMost(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> inFlightOnPage() == 1);
        assertThat(held.get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
    }

    @Test
    void aTokenizingRequestIsDroppedByAnAbortingSigtermThoughNoGaugeEverShowedIt() throws Exception {
        start(Engine.VLLM, vllm("v0.11.0").tokenizing(Duration.ofSeconds(2)));
        CompletableFuture<LoadGenerator.Request> held = stream(20, 20);
        await().atMost(Duration.ofSeconds(1)).until(() -> engine.inFlight() == 1);
        assertThat(inFlightOnPage()).isZero();

        engine.sigterm();

        // the stream's headers went out before tokenizing, so the client sees its accepted stream end without a token
        LoadGenerator.Request dropped = held.get();
        assertThat(dropped.outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
    }
}
