package dev.ebb.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.drain.HookFixtures;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.sim.LocalProcesses;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The drain hook as the renderer builds it for a single-Pod server of 30 s grace, run against a real engine on this
 * machine: what it wrote, one line per read, and how long it took.
 */
record EngineHook(List<String> lines, double seconds, long returnedNanos) {
    String last() {
        return lines.get(lines.size() - 1);
    }

    static EngineHook run(RealEngine engine) throws IOException, InterruptedException {
        List<InFlightGauges.Gauge> gauges = InFlightGauges.of(engine.engine);
        List<String> argv = HookFixtures.onThisMachine(DrainHook.command(
                new DrainTimelines().of(Optional.of(30), engine.engine, RoleKind.Server, false, false, true),
                "http",
                List.of(EnginePod.LOOPBACK),
                engine.port,
                "/metrics",
                gauges));
        Path log = Files.createTempFile("hook", ".log");
        long start = System.nanoTime();
        Process hook = LocalProcesses.builder(argv)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(log.toFile())
                .start();
        assertThat(hook.waitFor(40, TimeUnit.SECONDS))
                .as("the hook returned within its grace")
                .isTrue();
        long returned = System.nanoTime();
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        Files.delete(log);
        return new EngineHook(lines, (returned - start) / 1e9, returned);
    }
}
