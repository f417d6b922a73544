package dev.ebb.operator.drain;

import static dev.ebb.operator.drain.HookFixtures.ADDRESSES;
import static dev.ebb.operator.drain.HookFixtures.PORT;
import static dev.ebb.operator.drain.HookFixtures.drain;
import static dev.ebb.operator.drain.HookFixtures.drainAsync;
import static dev.ebb.operator.drain.HookFixtures.hold;
import static dev.ebb.operator.drain.HookFixtures.hook;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.FakeEngine;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The real hook script under python3 against fake engines, where what it reads is the point. Each test takes as
 * long as the drain it describes, so they run concurrently; the timing tests are in {@link DrainHookTimingTest}.
 */
@Execution(ExecutionMode.CONCURRENT)
class DrainHookScriptTest {
    @BeforeAll
    static void warmUp() throws Exception {
        HookFixtures.warmUp();
    }

    @Test
    void bodyThatIsNotMetricsCountsBusy() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            engine.faults().notMetrics(true);
            HookRun run = drain(engine, 15);

            assertThat(run.readStarts()).hasSizeGreaterThanOrEqualTo(5);
            assertThat(run.lines()).filteredOn(l -> l.startsWith("t=")).allMatch(l -> l.contains("busy ("));
            assertThat(run.last()).contains("no read may start");
        }
    }

    @Test
    void missingGaugeCountsBusy() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            engine.faults().missingGauge("sglang:num_decode_transfer_queue_reqs");
            HookRun run = drain(engine, 15);

            assertThat(run.lines()).filteredOn(l -> l.startsWith("t="))
                    .allMatch(l -> l.contains("busy (gauge sglang:num_decode_transfer_queue_reqs missing)"));
        }
    }

    @Test
    void everySeriesOfEveryGaugeIsSummed() throws Exception {
        try (FakeEngine vllm = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m");
                FakeEngine sglang = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            hold(vllm, 11, 20);
            hold(sglang, 11, 20);
            CompletableFuture<HookRun> v = drainAsync(hook(Engine.VLLM, 15, "http"), vllm.host());
            HookRun s = drain(sglang, 15);

            assertThat(v.get().lines()).anyMatch(l -> l.contains("busy (sum 11)"));
            assertThat(s.lines()).anyMatch(l -> l.contains("busy (sum 11)"));
        }
    }

    @Test
    void badArgumentsStillExitZero() throws Exception {
        HookRun run = HookRun.run(List.of("python3", "-c", DrainHook.SCRIPT, "--port", "not-a-port"), "127.0.0.1");

        assertThat(run.exitCode()).isZero();
        assertThat(run.last()).contains("bad arguments");
    }

    @Test
    void scriptDefaultsAreTheCalculatorsNumbers() throws Exception {
        Process help = LocalProcesses.builder(List.of("python3", "-c", DrainHook.SCRIPT, "--help")).start();
        String text = new String(help.getInputStream().readAllBytes()).replaceAll("\\s+", " ");
        help.waitFor();

        assertThat(text).contains("(default: " + DrainTimelines.SETTLE + ".0)")
                .contains("between read starts (default: " + DrainTimelines.INTERVAL + ".0)")
                .contains("is busy (default: " + DrainTimelines.READ_TIMEOUT + ".0)")
                .contains("minus this (default: " + DrainTimelines.LAST_READ_MARGIN + ".0)");
    }
}
