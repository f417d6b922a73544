package dev.ebb.operator.engine;

import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.EngineContainer;
import dev.ebb.operator.sim.EngineRuntime;
import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimKubelet;
import io.fabric8.kubernetes.api.model.Container;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One real vLLM API server for CPU, from the environment {@code make engine-env} installs, serving a tiny model this
 * class writes with random weights ({@code --load-format dummy}): nothing is downloaded.
 */
public final class RealVllm implements EngineContainer, AutoCloseable {
    public static final String RELEASE = "0.32.0";
    static final String MODEL_NAME = "tiny";
    private static final Duration START_LIMIT = Duration.ofMinutes(4);
    /**
     * What a CPU-only machine needs beside a rendered command: random weights for the tiny model, a context that fits
     * its KV cache, and on CPU a share of the machine's memory (most of it KV cache) that leaves room for more engines.
     */
    private static final List<String> ON_THIS_MACHINE = List.of("--load-format", "dummy", "--max-model-len", "8192",
            "--gpu-memory-utilization", "0.15");
    private static final Map<String, String> ENVIRONMENT = Map.of("VLLM_TARGET_DEVICE", "cpu", "HF_HUB_OFFLINE", "1",
            "VLLM_CPU_KVCACHE_SPACE", "1", "VLLM_NO_USAGE_STATS", "1", "DO_NOT_TRACK", "1");
    private static volatile Path model;

    final String host;
    final int port;
    final Duration startedIn;
    final Path log;
    private final Process process;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();

    private RealVllm(Process process, String host, int port, Path log, Duration startedIn) {
        this.process = process;
        this.host = host;
        this.port = port;
        this.log = log;
        this.startedIn = startedIn;
    }

    /** Where the environment is: the same root the install script takes. */
    static Path venv() {
        Path root = Optional.ofNullable(System.getenv("EBB_ENGINE_DIR")).map(Path::of)
                .orElse(Path.of(System.getProperty("user.home"), ".cache", "ebb-engines"));
        return root.resolve("vllm-cpu-" + RELEASE).resolve("venv");
    }

    public static boolean installed() {
        return Files.exists(venv().getParent().resolve("installed"));
    }

    /** Starts the server with the flags given beside the fixed ones, and waits until /health answers 200. */
    static RealVllm start(String... flags) throws IOException, InterruptedException {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        List<String> argv = new ArrayList<>(List.of(venv().resolve("bin/vllm").toString(), "serve", tinyModel().toString(),
                "--served-model-name", MODEL_NAME, "--host", "127.0.0.1", "--port", Integer.toString(port)));
        argv.addAll(ON_THIS_MACHINE);
        argv.addAll(List.of(flags));
        long begun = System.nanoTime();
        RealVllm engine = launch(argv, Map.of(), "127.0.0.1", port);
        try {
            await().atMost(START_LIMIT).pollInterval(Duration.ofMillis(200)).until(() -> !engine.process.isAlive() || engine.healthy());
            if (!engine.process.isAlive()) {
                throw new IllegalStateException("vLLM exited while starting; its log: " + engine.log);
            }
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
        return new RealVllm(engine.process, engine.host, port, engine.log, Duration.ofNanos(System.nanoTime() - begun));
    }

    /**
     * A kubelet's runtime that runs each vLLM Pod's engine container as rendered, with this environment's vLLM and
     * the tiny model, on the Pod's address; whether it is ready is the readiness probe's to find out.
     */
    public static EngineRuntime runtime() {
        return (pod, address) -> {
            Container main = pod.getSpec().getContainers().get(0);
            if (!SimKubelet.engineOf(Optional.ofNullable(main.getCommand()).orElse(List.of())).equals(Optional.of(Engine.VLLM))) {
                return Optional.empty();
            }
            String loopback = LoopbackAddresses.loopbackOf(address);
            // a Pod on the pod network has a loopback of its own, where the hook and the reads reach its engine
            List<String> argv = new ArrayList<>(loopback.equals(address) ? List.of(venv().resolve("bin/vllm").toString())
                    : List.of(venv().resolve("bin/python").toString(), Path.of("src/test/engine/serve-in-pod.py").toAbsolutePath().toString(), loopback));
            argv.addAll(asRendered(main.getCommand(), tinyModel(), address));
            Map<String, String> env = new HashMap<>();
            Optional.ofNullable(main.getEnv()).orElse(List.of()).stream().filter(v -> v.getValue() != null)
                    .forEach(v -> env.put(v.getName(), v.getValue()));
            int port = Integer.parseInt(argv.get(argv.indexOf("--port") + 1));
            return Optional.of(launch(argv, env, address, port));
        };
    }

    /**
     * The arguments of the rendered {@code vllm serve <model> ...}, with the tiny model in place of the rendered one
     * and the Pod's address in place of the rendered host; every other rendered flag is kept, so one the release does
     * not know fails the start.
     */
    static List<String> asRendered(List<String> rendered, Path tiny, String address) {
        if (rendered.size() < 3 || !rendered.get(0).equals("vllm") || !rendered.get(1).equals("serve")) {
            throw new IllegalArgumentException("not a rendered vllm serve command: " + rendered);
        }
        List<String> argv = new ArrayList<>(List.of("serve", tiny.toString()));
        List<String> flags = rendered.subList(3, rendered.size());
        int host = flags.indexOf("--host");
        for (int i = 0; i < flags.size(); i++) {
            argv.add(i == host + 1 && host >= 0 ? address : flags.get(i));
        }
        if (host < 0) {
            argv.addAll(List.of("--host", address));
        }
        if (!argv.contains("--port")) {
            throw new IllegalArgumentException("a rendered vllm serve command names its port: " + rendered);
        }
        argv.addAll(ON_THIS_MACHINE);
        return List.copyOf(argv);
    }

    private static RealVllm launch(List<String> argv, Map<String, String> containerEnv, String host, int port) throws IOException {
        Path log = Files.createTempFile("vllm-" + host + "-" + port, ".log");
        ProcessBuilder builder = LocalProcesses.builder(argv).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(containerEnv);
        builder.environment().putAll(ENVIRONMENT);
        return new RealVllm(builder.start(), host, port, log, Duration.ZERO);
    }

    private static synchronized Path tinyModel() throws IOException {
        if (model == null) {
            Path dir = Files.createTempDirectory("tiny-llama");
            Path script = Path.of("src/test/engine/make-tiny-model.py").toAbsolutePath();
            Process made = LocalProcesses.builder(List.of(venv().resolve("bin/python").toString(), script.toString(), dir.toString()))
                    .inheritIO().start();
            try {
                if (!made.waitFor(60, TimeUnit.SECONDS) || made.exitValue() != 0) {
                    throw new IllegalStateException("could not write the tiny model");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while writing the tiny model", e);
            }
            model = dir;
        }
        return model;
    }

    URI uri(String path) {
        return URI.create("http://" + host + ":" + port + path);
    }

    boolean healthy() {
        try {
            return get("/health").statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    HttpResponse<String> get(String path) throws IOException {
        try {
            return http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** A prompt of this many words of the tiny model's vocabulary. */
    public static String prompt(int words) {
        StringBuilder prompt = new StringBuilder();
        for (int i = 0; i < words; i++) {
            prompt.append(i == 0 ? "" : " ").append('w').append(i % 500);
        }
        return prompt.toString();
    }

    /** SIGTERM to the API server alone, as the container runtime signals a container's first process. */
    @Override
    public void sigterm() {
        process.destroy();
    }

    /** SIGKILL to the whole process tree, as a container's cgroup is killed. */
    @Override
    public void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    @Override
    public boolean exited() {
        return !process.isAlive();
    }

    boolean exitsWithin(Duration limit) throws InterruptedException {
        return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean alive() {
        return process.isAlive();
    }

    @Override
    public void close() {
        kill();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
