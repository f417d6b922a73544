package dev.ebb.operator.drain;

import static dev.ebb.operator.drain.HookFixtures.ADDRESSES;
import static dev.ebb.operator.drain.HookFixtures.PORT;
import static dev.ebb.operator.drain.HookFixtures.drainAsync;
import static dev.ebb.operator.drain.HookFixtures.hold;
import static dev.ebb.operator.drain.HookFixtures.hook;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.EngineBehaviour;
import dev.ebb.operator.sim.EngineFaults;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RouteTarget;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the drain hook makes of engines whose gauges trail the requests they hold: vLLM's tokenizing, before either
 * gauge counts a request, and SGLang's gauges, written only when its scheduler logs. The hook reads every
 * {@link DrainTimelines#INTERVAL} s and returns on two idle reads in a row, so a request that stays invisible for
 * longer than one interval after arriving right after a read is missed by both.
 */
class LaggingEngineHookTest {
    @BeforeAll
    static void warmUp() throws Exception {
        HookFixtures.warmUp();
    }

    private static FakeEngine start(Engine kind, EngineBehaviour behaviour) throws IOException {
        return FakeEngine.start(kind, ADDRESSES.next(), PORT, "m", new EngineFaults(), behaviour, null);
    }

    private static CompletableFuture<LoadGenerator.Request> stream(FakeEngine engine, double seconds) {
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget("p", engine.uri(""))),
                1,
                (int) (seconds * 1000 / 50),
                Duration.ofMillis(50));
        return CompletableFuture.supplyAsync(load::send);
    }

    /** Returns once the hook's first read has been answered, an idle one: the next comes one interval later. */
    private static void afterFirstRead(FakeEngine engine) {
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> engine.metricsReads() >= 1);
    }

    @Test
    void aRequestTokenizingForLessThanTheReadIntervalIsSeenByTheNextRead() throws Exception {
        try (FakeEngine engine =
                start(Engine.VLLM, EngineBehaviour.of(Engine.VLLM).tokenizing(Duration.ofMillis(600)))) {
            CompletableFuture<HookRun> hook = drainAsync(hook(Engine.VLLM, 30, "http"), engine.host());
            afterFirstRead(engine);
            CompletableFuture<LoadGenerator.Request> late = stream(engine, 3);

            HookRun run = hook.get();

            assertThat(run.lines()).as(String.join(" / ", run.lines())).anyMatch(l -> l.contains("busy (sum 1)"));
            assertThat(late.get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
            assertThat(run.last()).contains("idle on two consecutive reads");
        }
    }

    @Test
    void aRequestTokenizingForLongerThanTheReadIntervalIsMissedByBothIdleReads() throws Exception {
        try (FakeEngine engine =
                start(Engine.VLLM, EngineBehaviour.of(Engine.VLLM).tokenizing(Duration.ofMillis(2500)))) {
            CompletableFuture<HookRun> hook = drainAsync(hook(Engine.VLLM, 30, "http"), engine.host());
            afterFirstRead(engine);
            CompletableFuture<LoadGenerator.Request> late = stream(engine, 3);

            HookRun run = hook.get();

            // the hook lets SIGTERM through while the engine holds a request no gauge has shown yet
            assertThat(run.last()).as(String.join(" / ", run.lines())).contains("idle on two consecutive reads");
            assertThat(run.lines()).noneMatch(l -> l.contains("busy"));
            assertThat(engine.inFlight()).isEqualTo(1);
            engine.sigterm();
            assertThat(late.get().outcome()).isNotEqualTo(LoadGenerator.Outcome.COMPLETED);
        }
    }

    @Test
    void sglangsGaugeStillShowingARequestThatEndedHoldsTheHookForUpToOneLagLonger() throws Exception {
        Duration lag = Duration.ofSeconds(3);
        try (FakeEngine engine =
                start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).busyGaugeLag(lag))) {
            hold(engine, 1, 7.5);
            CompletableFuture<HookRun> hook = drainAsync(hook(Engine.SGLANG, 30, "http"), engine.host());
            await().atMost(Duration.ofSeconds(15))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> engine.inFlight() == 0);
            long idleAt = System.nanoTime();

            HookRun run = hook.get();
            double afterIdle = (System.nanoTime() - idleAt) / 1e9;

            assertThat(run.lines()).as(String.join(" / ", run.lines())).anyMatch(l -> l.contains("busy (sum 1)"));
            assertThat(run.last()).contains("idle on two consecutive reads");
            // without a lag the hook returns one to two intervals after the last request ends; the lag adds up to
            // itself (with a second more for a python process on a loaded machine)
            assertThat(afterIdle).as(String.join(" / ", run.lines())).isBetween(0.9, lag.toSeconds() + 3.3);
        }
    }

    @Test
    void sglangsGaugeLaggingLongerThanTheReadIntervalHidesANewRequestFromTheHookButSglangStillDrainsIt()
            throws Exception {
        // the idle writer's 30 s: a request arriving between two writes shows on no page the hook reads in that time
        try (FakeEngine engine =
                start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).busyGaugeLag(Duration.ofSeconds(30)))) {
            CompletableFuture<HookRun> hook = drainAsync(hook(Engine.SGLANG, 30, "http"), engine.host());
            afterFirstRead(engine);
            CompletableFuture<LoadGenerator.Request> late = stream(engine, 3);

            HookRun run = hook.get();

            assertThat(run.last()).as(String.join(" / ", run.lines())).contains("idle on two consecutive reads");
            assertThat(engine.inFlight()).isEqualTo(1);
            // SGLang's own drain on SIGTERM is what saves the request, for as long as the grace lasts
            engine.sigterm();
            assertThat(late.get().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }
    }
    /**
     * With SGLang's gauges as observed (a finished request stays on its page until the idle write, about 30 s later),
     * a hook that starts right after a stream ends never reads idle and gives up at its last read: SIGTERM then
     * follows, and SGLang, holding nothing, exits. What RealSglangIT saw the hook do at 0.5.15.
     */
    @Test
    void sglangsGaugesAsObservedHoldAHookStartedRightAfterAStreamToItsLastRead() throws Exception {
        try (FakeEngine engine =
                start(Engine.SGLANG, EngineBehaviour.of(Engine.SGLANG).timedAsObserved(Engine.SGLANG))) {
            hold(engine, 1, 3);
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> engine.inFlight() == 0);
            long started = System.nanoTime();

            HookRun run =
                    drainAsync(hook(Engine.SGLANG, 15, "http"), engine.host()).get();

            double took = (System.nanoTime() - started) / 1e9;
            assertThat(run.lines()).as(String.join(" / ", run.lines())).allMatch(l -> !l.contains("idle on two"));
            assertThat(run.lines()).anyMatch(l -> l.contains("busy (sum 1)"));
            assertThat(took).as(String.join(" / ", run.lines())).isBetween(DrainTimelines.SETTLE + 4.0, 15.0);
        }
    }
}
