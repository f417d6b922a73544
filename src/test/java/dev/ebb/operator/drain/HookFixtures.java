package dev.ebb.operator.drain;

import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.RouteTarget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Fake engines and the hook as the renderer builds it, for the tests that run the real script. */
public final class HookFixtures {
    private static final DrainTimelines TIMELINES = new DrainTimelines();
    private static final Path MOUNTED_SCRIPT = mountedScript();

    static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    static final int PORT = 8000;
    private static final ExecutorService CLIENTS =
            Executors.newCachedThreadPool(DaemonThreads.named("hook-test-client"));

    /**
     * What an engine container often carries for its model downloads: proxies on a dead address, and a NO_PROXY that
     * names localhost but not 127.0.0.1. A hook or read that honoured them would never reach the engine.
     */
    public static final Map<String, String> PROXIES = Map.of(
            "http_proxy",
            "http://127.0.0.1:9",
            "HTTP_PROXY",
            "http://127.0.0.1:9",
            "https_proxy",
            "http://127.0.0.1:9",
            "HTTPS_PROXY",
            "http://127.0.0.1:9",
            "all_proxy",
            "http://127.0.0.1:9",
            "NO_PROXY",
            "localhost",
            "no_proxy",
            "localhost");

    private HookFixtures() {}

    public static List<String> hook(Engine engine, int grace, String scheme) {
        return hook(engine, grace, scheme, List.of(EnginePod.LOOPBACK));
    }

    /** @param hosts what the hook reads and sums: the member's own engine and its peers, as the renderer lists them */
    static List<String> hook(Engine engine, int grace, String scheme, List<String> hosts) {
        DrainTimeline timeline = TIMELINES.of(Optional.of(grace), engine, RoleKind.Server, false, false, false);
        return onThisMachine(DrainHook.command(timeline, scheme, hosts, PORT, "/metrics", InFlightGauges.of(engine)));
    }

    /** The rendered hook with its mounted script at {@code script} on this machine, as the kubelet mounts the ConfigMap. */
    public static List<String> onThisMachine(List<String> rendered, Path script) {
        return onThisMachine(rendered, script, Path.of("/dev/null"), Path.of("/dev/null"));
    }

    /**
     * The rendered hook with its mounted script at {@code script}, and the container's log and termination message
     * files at these: on this machine {@code /proc/1/fd/2} is init's stderr, which no test may write.
     */
    public static List<String> onThisMachine(
            List<String> rendered, Path script, Path containerLog, Path terminationLog) {
        String mounted = DrainHook.MOUNT_PATH + "/" + DrainHook.FILE;
        return rendered.stream()
                .map(arg -> arg.equals(mounted)
                        ? script.toString()
                        : arg.equals(DrainHook.CONTAINER_LOG)
                                ? containerLog.toString()
                                : arg.equals(DrainHook.TERMINATION_LOG) ? terminationLog.toString() : arg)
                .toList();
    }

    /** The rendered hook with this release's script mounted. */
    public static List<String> onThisMachine(List<String> rendered) {
        return onThisMachine(rendered, MOUNTED_SCRIPT);
    }

    private static Path mountedScript() {
        try {
            Path script = Files.createTempFile("drain-hook", ".py");
            script.toFile().deleteOnExit();
            return Files.writeString(script, DrainHook.SCRIPT);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static HookRun drain(FakeEngine engine, int grace) throws IOException, InterruptedException {
        return HookRun.run(hook(engine.engine(), grace, "http"), engine.host());
    }

    static CompletableFuture<HookRun> drainAsync(List<String> hook, String address) {
        return drainAsync(hook, address, Map.of());
    }

    static CompletableFuture<HookRun> drainAsync(List<String> hook, String address, Map<String, String> environment) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return HookRun.run(hook, address, environment);
                    } catch (IOException | InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                CLIENTS);
    }

    /** The same argv with one option's value replaced, as a hand-written manifest might get it wrong. */
    static List<String> withOption(List<String> argv, String option, String value) {
        List<String> out = new ArrayList<>(argv);
        int at = out.indexOf(option);
        if (at < 0) {
            throw new IllegalArgumentException("the hook has no option " + option);
        }
        out.set(at + 1, value);
        return out;
    }

    /** Starts requests that the engine holds for about {@code seconds}. */
    static void hold(FakeEngine engine, int requests, double seconds) {
        int tokens = (int) (seconds * 1000 / 50);
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget("p", engine.uri(""))), 1, tokens, Duration.ofMillis(50));
        for (int i = 0; i < requests; i++) {
            CLIENTS.submit(load::send);
        }
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == requests);
    }

    /** The first interpreter a JVM starts is the slowest; the timed hooks should not pay for it. */
    public static void warmUp() throws IOException, InterruptedException {
        LocalProcesses.builder(List.of("python3", "-c", "import urllib.request, ssl, argparse"))
                .start()
                .waitFor();
    }
}
