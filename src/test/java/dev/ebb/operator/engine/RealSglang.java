package dev.ebb.operator.engine;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One real SGLang server for CPU, from the environment {@code make engine-env} installs, serving the tiny model with
 * random weights: its CPU path with plain torch operators ({@code SGLANG_USE_CPU_ENGINE=1}, {@code --device cpu},
 * {@code --attention-backend torch_native}), since PyPI serves no CPU build of sgl_kernel.
 */
public final class RealSglang extends RealEngine {
    public static final String RELEASE = "0.5.15";
    private static final String ENVIRONMENT_NAME = "sglang-cpu-" + RELEASE;
    private static final Map<String, String> ENVIRONMENT = Map.of("SGLANG_USE_CPU_ENGINE", "1", "HF_HUB_OFFLINE", "1", "DO_NOT_TRACK", "1");

    private RealSglang(Process process, int port, Path log, Duration startedIn) {
        super(process, "127.0.0.1", port, log, startedIn);
    }

    public static boolean installed() {
        return installed(ENVIRONMENT_NAME);
    }

    /** Starts the server with the flags given beside the fixed ones, and waits until /health answers 200. */
    static RealSglang start(String... flags) throws IOException {
        Path python = environment(ENVIRONMENT_NAME).resolve("venv/bin/python");
        int port = freePort();
        List<String> argv = new ArrayList<>(List.of(python.toString(), "-m", "sglang.launch_server",
                "--model-path", tinyModel(python).toString(), "--served-model-name", MODEL_NAME, "--load-format", "dummy",
                "--device", "cpu", "--attention-backend", "torch_native", "--host", "127.0.0.1", "--port", Integer.toString(port),
                "--enable-metrics",
                // without a bound its KV cache takes most of the machine's memory
                "--max-total-tokens", "32768"));
        argv.addAll(List.of(flags));
        long begun = System.nanoTime();
        Path log = logFor("127.0.0.1", port);
        RealSglang starting = new RealSglang(launch(argv, ENVIRONMENT, log), port, log, Duration.ZERO);
        Duration took = awaitHealthy(starting, begun);
        return new RealSglang(starting.process(), port, log, took);
    }
}
