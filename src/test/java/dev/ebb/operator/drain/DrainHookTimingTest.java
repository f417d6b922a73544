package dev.ebb.operator.drain;

import static dev.ebb.operator.drain.HookFixtures.ADDRESSES;
import static dev.ebb.operator.drain.HookFixtures.PORT;
import static dev.ebb.operator.drain.HookFixtures.drain;
import static dev.ebb.operator.drain.HookFixtures.drainAsync;
import static dev.ebb.operator.drain.HookFixtures.hold;
import static dev.ebb.operator.drain.HookFixtures.hook;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.CannedListener;
import dev.ebb.operator.sim.EngineFaults;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.SelfSignedTls;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real hook under python3 against fake engines, where the timing is the point: one at a time, so that no
 * other test's processes compete for the two cores. Times come from the hook's own clock (its log), with the
 * wall time of the whole process bounded too.
 */
class DrainHookTimingTest {
    /** What starting the interpreter may add to the hook's own time on a loaded two-core machine. */
    private static final double STARTUP = 1.0;
    /** The hook logs its times rounded to a tenth of a second: no bound on them can be finer. */
    private static final double LOG_RESOLUTION = 0.1;
    /** How late a read may start after its planned time, woken late by a loaded machine. */
    private static final double LATE_WAKE = 0.1;

    @BeforeAll
    static void warmUp() throws Exception {
        HookFixtures.warmUp();
    }

    private static void returnedAround(HookRun run, double at, double tolerance) {
        assertThat(run.returnedAt()).as(String.join(" / ", run.lines())).isBetween(at - tolerance, at + tolerance);
        // the process runs longer than the hook's own clock, which its rounding may put up to half a tenth later
        assertThat(run.seconds()).isBetween(run.returnedAt() - LOG_RESOLUTION, run.returnedAt() + STARTUP);
        assertThat(run.exitCode()).isZero();
    }

    private static void readsStartedAt(HookRun run, Double... planned) {
        assertThat(run.readStarts()).as(String.join(" / ", run.lines())).hasSameSizeAs(planned);
        firstReadsStartedAt(run, planned);
    }

    /** Each read started at its planned time, or as much later as the log's rounding and a late wake allow. */
    private static void firstReadsStartedAt(HookRun run, Double... planned) {
        List<Double> starts = run.readStarts();
        assertThat(starts).as(String.join(" / ", run.lines())).hasSizeGreaterThanOrEqualTo(planned.length);
        for (int i = 0; i < planned.length; i++) {
            assertThat(starts.get(i))
                    .as(String.join(" / ", run.lines()))
                    .isBetween(planned[i] - LOG_RESOLUTION / 2, planned[i] + LOG_RESOLUTION + LATE_WAKE);
        }
    }

    @Test
    void idleEngineReturnsAfterSixSeconds() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            HookRun run = drain(engine, 30);

            returnedAround(run, 6.0, 0.5);
            readsStartedAt(run, 5.0, 6.0);
            assertThat(run.lines()).hasSize(3);
            assertThat(run.lines().get(0)).endsWith(" read: idle (sum 0), 1 in a row");
            assertThat(run.lines().get(1)).endsWith(" read: idle (sum 0), 2 in a row");
            assertThat(run.last()).endsWith(": idle on two consecutive reads");
        }
    }

    @Test
    void busyForEightSecondsReturnsOneToTwoSecondsAfterTheLastRequestEnds() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            hold(engine, 2, 8);
            CompletableFuture<HookRun> hook = drainAsync(hook(Engine.SGLANG, 30, "http"), engine.host());
            await().atMost(Duration.ofSeconds(15))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> engine.inFlight() == 0);
            long idleAt = System.nanoTime();
            HookRun run = hook.get();
            double afterIdle = (System.nanoTime() - idleAt) / 1e9;

            assertThat(run.lines()).anyMatch(l -> l.contains("busy (sum 2)"));
            assertThat(run.last()).contains("idle on two consecutive reads");
            // the first read after the engine empties comes within an interval, and the second one more later; the
            // moment it empties is seen by polling, which a loaded machine may delay by a tenth of a second
            assertThat(afterIdle).as(String.join(" / ", run.lines())).isBetween(1.0 - LATE_WAKE, 2.3);
        }
    }

    @Test
    void alwaysBusyWithGrace15ReadsUntilTenSecondsAndStartsNoReadAfter() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            hold(engine, 1, 30);
            HookRun run = drain(engine, 15);

            readsStartedAt(run, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0);
            // right after the read that started at 10 s: the log's rounding below, that read and a late wake above
            returnedAround(run, 10.2, 0.3);
            assertThat(run.last()).contains("no read may start after 10s");
        }
    }

    @Test
    void graceShorterThanTheSettleReturnsAtItsSigtermPointWithoutReading() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            HookRun run = drain(engine, 6);

            assertThat(run.readStarts()).isEmpty();
            returnedAround(run, 3.0, 0.2);
            assertThat(run.last()).contains("no read may start after 1s");
        }
    }

    @Test
    void refusedConnectionEndsTheHookRightAfterTheSettle() throws Exception {
        HookRun run = HookRun.run(hook(Engine.VLLM, 30, "http"), ADDRESSES.next());

        returnedAround(run, 5.2, 0.2);
        assertThat(run.last()).contains("connection refused");
    }

    @Test
    void httpErrorEndsTheHookRightAfterTheFirstRead() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            engine.faults().metricsStatus(500);
            HookRun run = drain(engine, 30);

            returnedAround(run, 5.2, 0.2);
            readsStartedAt(run, 5.0);
            assertThat(run.last()).contains("HTTP 500");
        }
    }

    @Test
    void readThatHangsCountsBusyAndIsCutAtTwoSeconds() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            engine.faults().slowMetrics(Duration.ofSeconds(20));
            HookRun run = drain(engine, 15);

            assertThat(run.lines())
                    .filteredOn(l -> l.startsWith("t="))
                    .hasSize(3)
                    .allMatch(l -> l.contains("busy (no answer within 2s)"));
            readsStartedAt(run, 5.0, 7.0, 9.0);
            returnedAround(run, 11.0, 0.3);
        }
    }

    @Test
    void readThatTricklesIsCutAtTwoSecondsAndCountsBusy() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            engine.faults().trickleMetrics(Duration.ofMillis(300));
            HookRun run = drain(engine, 15);

            assertThat(run.lines())
                    .filteredOn(l -> l.startsWith("t="))
                    .hasSize(3)
                    .allMatch(l -> l.contains("busy (no answer within 2s)"));
            readsStartedAt(run, 5.0, 7.0, 9.0);
            returnedAround(run, 11.0, 0.3);
            assertThat(run.returnedAt()).isLessThanOrEqualTo(15 - 3);
        }
    }

    @Test
    void readsAfterSlowOnesKeepTheirIntervalSoTheSecondIdleReadIsASecondAfterTheFirst() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            engine.faults().slowMetrics(Duration.ofSeconds(3));
            CompletableFuture<HookRun> hook = drainAsync(hook(Engine.VLLM, 30, "http"), engine.host());
            await().atMost(Duration.ofSeconds(15)).until(() -> engine.metricsReads() >= 3);
            engine.faults().slowMetrics(Duration.ZERO);
            HookRun run = hook.get();

            List<Double> starts = run.readStarts();
            firstReadsStartedAt(run, 5.0, 7.0, 9.0);
            // reads planned an interval apart: rounding and one read's late wake may take a little from a gap
            for (int i = 1; i < starts.size(); i++) {
                assertThat(starts.get(i) - starts.get(i - 1))
                        .as(String.join(" / ", run.lines()))
                        .isGreaterThanOrEqualTo(1.0 - LOG_RESOLUTION - LATE_WAKE);
            }
            assertThat(run.lines()).filteredOn(l -> l.contains("idle (sum 0)")).hasSize(2);
            returnedAround(run, 12.0, 0.3);
        }
    }

    @Test
    void tlsEngineIsReadOverHttpsAndAFailedHandshakeEndsTheHook() throws Exception {
        String plainAddress = ADDRESSES.next();
        try (FakeEngine tls = FakeEngine.start(
                        Engine.VLLM, ADDRESSES.next(), PORT, "m", new EngineFaults(), SelfSignedTls.serverContext());
                CannedListener plain = new CannedListener(
                        plainAddress, PORT, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")) {
            HookRun overTls = HookRun.run(hook(Engine.VLLM, 30, "https"), tls.host());
            HookRun handshakeFails = HookRun.run(hook(Engine.VLLM, 30, "https"), plainAddress);

            returnedAround(overTls, 6.0, 0.5);
            assertThat(overTls.last()).contains("idle on two consecutive reads");
            returnedAround(handshakeFails, 5.2, 0.2);
            assertThat(handshakeFails.last()).contains("TLS handshake failed");
        }
    }
}
