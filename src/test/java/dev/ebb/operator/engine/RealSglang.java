package dev.ebb.operator.engine;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.CommandedEngine;
import dev.ebb.operator.sim.EngineRuntime;
import io.fabric8.kubernetes.api.model.Container;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One real SGLang server for CPU, from the environment {@code make engine-env} installs, serving the tiny model with
 * random weights: its CPU path with plain torch operators ({@code SGLANG_USE_CPU_ENGINE=1}, {@code --device cpu},
 * {@code --attention-backend torch_native}), since PyPI serves no CPU build of sgl_kernel, and its KV cache bounded
 * ({@code --max-total-tokens}), since unbounded it takes most of the machine's memory.
 */
public final class RealSglang extends RealEngine {
    public static final String RELEASE = "0.5.15";
    private static final String ENVIRONMENT_NAME = "sglang-cpu-" + RELEASE;
    private static final Map<String, String> ENVIRONMENT =
            Map.of("SGLANG_USE_CPU_ENGINE", "1", "HF_HUB_OFFLINE", "1", "DO_NOT_TRACK", "1");

    private RealSglang(Process process, int port, Path log, Duration startedIn) {
        super(process, Engine.SGLANG, "127.0.0.1", port, log, startedIn);
    }

    /** What a CPU-only machine needs beside a rendered command; see {@link #start}. */
    private static final List<String> ON_THIS_MACHINE = List.of(
            "--load-format",
            "dummy",
            "--device",
            "cpu",
            "--attention-backend",
            "torch_native",
            "--max-total-tokens",
            "32768");

    public static boolean installed() {
        return installed(ENVIRONMENT_NAME);
    }

    private static Path python() {
        return environment(ENVIRONMENT_NAME).resolve("venv/bin/python");
    }

    /**
     * A kubelet's runtime that runs each SGLang Pod's engine container as rendered, with this environment's SGLang and
     * the tiny model, on the Pod's address; whether it is ready is the readiness probe's to find out.
     */
    public static EngineRuntime runtime() {
        return (pod, address) -> {
            Container main = pod.getSpec().getContainers().get(0);
            if (!CommandedEngine.engineOf(Optional.ofNullable(main.getCommand()).orElse(List.of()))
                    .equals(Optional.of(Engine.SGLANG))) {
                return Optional.empty();
            }
            return Optional.of(inPod(
                    Engine.SGLANG,
                    python(),
                    "sglang.launch_server",
                    asRendered(main.getCommand(), tinyModel(python()), address),
                    main,
                    ENVIRONMENT,
                    address));
        };
    }

    /**
     * The arguments of the rendered {@code python3 -m sglang.launch_server --model-path <model> ...}, with the tiny
     * model in place of the rendered one and the Pod's address in place of the rendered host; every other rendered
     * flag is kept, so one the release does not know fails the start.
     */
    static List<String> asRendered(List<String> rendered, Path tiny, String address) {
        if (rendered.size() < 4
                || !rendered.subList(0, 3).equals(List.of("python3", "-m", "sglang.launch_server"))
                || !rendered.contains("--port")) {
            throw new IllegalArgumentException(
                    "not a rendered sglang.launch_server command with its port: " + rendered);
        }
        List<String> args = withValue(
                withValue(rendered.subList(3, rendered.size()), "--model-path", tiny.toString()), "--host", address);
        args.addAll(ON_THIS_MACHINE);
        return List.copyOf(args);
    }

    /** Starts the server with the flags given beside the fixed ones, and waits until /health answers 200. */
    static RealSglang start(String... flags) throws IOException {
        int port = freePort();
        List<String> argv = new ArrayList<>(List.of(
                python().toString(),
                "-m",
                "sglang.launch_server",
                "--model-path",
                tinyModel(python()).toString(),
                "--served-model-name",
                MODEL_NAME,
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--enable-metrics"));
        argv.addAll(ON_THIS_MACHINE);
        argv.addAll(List.of(flags));
        long begun = System.nanoTime();
        Path log = logFor("127.0.0.1", port);
        RealSglang starting = new RealSglang(launch(argv, ENVIRONMENT, log), port, log, Duration.ZERO);
        Duration took = awaitHealthy(starting, begun);
        return new RealSglang(starting.process(), port, log, took);
    }
}
