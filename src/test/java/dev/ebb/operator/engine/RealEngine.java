package dev.ebb.operator.engine;

import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.read.PrometheusText;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.sim.EngineContainer;
import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.ProcessContainer;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A real engine's API server for CPU, run as a process of this machine from an environment {@code make engine-env}
 * installs, serving the tiny model the tests write: what every engine of the engine tier shares.
 */
public class RealEngine implements EngineContainer, AutoCloseable {
    /** The name every engine of the tier serves the tiny model by, unless a rendered command names another. */
    static final String MODEL_NAME = "tiny";
    /** Start-up on 2 shared cores, with a margin: 44 to 133 s have been seen. */
    private static final Duration START_LIMIT = Duration.ofMinutes(6);

    private static volatile Path model;

    final Engine engine;
    final String host;
    final int port;
    final Path log;
    /** From the process's start to the first 200 from /health; zero for one whose readiness is another's to find. */
    final Duration startedIn;

    private final Process process;
    private final ProcessContainer container;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    RealEngine(Process process, Engine engine, String host, int port, Path log, Duration startedIn) {
        this.process = process;
        this.container = new ProcessContainer(process);
        this.engine = engine;
        this.host = host;
        this.port = port;
        this.log = log;
        this.startedIn = startedIn;
    }

    /** Where an engine's environment is, by its directory's name: the same root the install script takes. */
    static Path environment(String name) {
        Path root = Optional.ofNullable(System.getenv("EBB_ENGINE_DIR"))
                .map(Path::of)
                .orElse(Path.of(System.getProperty("user.home"), ".cache", "ebb-engines"));
        return root.resolve(name);
    }

    static boolean installed(String name) {
        return Files.exists(environment(name).resolve("installed"));
    }

    static int freePort() throws IOException {
        try (ServerSocket free = new ServerSocket(0)) {
            return free.getLocalPort();
        }
    }

    /** Starts the process, its output to a log file of its own; it is not waited for. */
    static Process launch(List<String> argv, Map<String, String> env, Path log) throws IOException {
        ProcessBuilder builder =
                LocalProcesses.builder(argv).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(env);
        return builder.start();
    }

    static Path logFor(String host, int port) throws IOException {
        return Files.createTempFile("engine-" + host + "-" + port, ".log");
    }

    /** Waits until /health answers 200, and returns how long that took from {@code begun}; a process that exits first fails. */
    static Duration awaitHealthy(RealEngine engine, long begun) {
        try {
            await().atMost(START_LIMIT)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> !engine.process.isAlive() || engine.healthy());
            if (!engine.process.isAlive()) {
                throw new IllegalStateException("the engine exited while starting; its log: " + engine.log);
            }
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
        return Duration.ofNanos(System.nanoTime() - begun);
    }

    /** The tiny model, written once per JVM with the given environment's Python (which has tokenizers). */
    static synchronized Path tinyModel(Path python) throws IOException {
        if (model == null) {
            Path dir = Files.createTempDirectory("tiny-llama");
            Path script = Path.of("src/test/engine/make-tiny-model.py").toAbsolutePath();
            Process made = LocalProcesses.builder(List.of(python.toString(), script.toString(), dir.toString()))
                    .inheritIO()
                    .start();
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

    /**
     * A Pod's engine container run as rendered: the engine's module under this environment's Python, listening on the
     * Pod's address (which {@code args} must give as --host) and, for a Pod on the pod network, on the address that
     * stands for its loopback, where the hook and the reads reach it. The container's literal variables come first,
     * the engine's own for this machine over them.
     */
    static RealEngine inPod(
            Engine engine,
            Path python,
            String module,
            List<String> args,
            Container main,
            Map<String, String> engineEnv,
            String address)
            throws IOException {
        String loopback = LoopbackAddresses.loopbackOf(address);
        List<String> argv = new ArrayList<>(List.of(python.toString()));
        argv.addAll(
                loopback.equals(address)
                        ? List.of("-m", module)
                        : List.of(
                                Path.of("src/test/engine/serve-in-pod.py")
                                        .toAbsolutePath()
                                        .toString(),
                                loopback,
                                module));
        argv.addAll(args);
        Map<String, String> env = ProcessContainer.literalEnvironment(main);
        env.putAll(engineEnv);
        int port = Integer.parseInt(args.get(args.indexOf("--port") + 1));
        Path log = logFor(address, port);
        return new RealEngine(launch(argv, env, log), engine, address, port, log, Duration.ZERO);
    }

    /** The flags with the value after {@code flag} replaced, or the flag added with it where they lack it. */
    static List<String> withValue(List<String> flags, String flag, String value) {
        List<String> out = new ArrayList<>(flags);
        int at = out.indexOf(flag);
        if (at >= 0 && at + 1 < out.size()) {
            out.set(at + 1, value);
        } else {
            out.addAll(List.of(flag, value));
        }
        return out;
    }

    /** A prompt of this many words of the tiny model's vocabulary. */
    public static String prompt(int words) {
        StringBuilder prompt = new StringBuilder();
        for (int i = 0; i < words; i++) {
            prompt.append(i == 0 ? "" : " ").append('w').append(i % 500);
        }
        return prompt.toString();
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
            return http.send(
                    HttpRequest.newBuilder(uri(path))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** The engine's own page, as the reader reads it for this engine's gauges. */
    Reading read() throws IOException {
        return PrometheusText.read(get("/metrics").body(), InFlightGauges.of(engine));
    }

    /** When the gauges first counted a request, looked for every 5 ms while its stream runs; 0 if not before it ended. */
    long firstBusy(CompletableFuture<Stream> stream) throws IOException, InterruptedException {
        while (!stream.isDone()) {
            if (read() instanceof Reading.Busy) {
                return System.nanoTime();
            }
            Thread.sleep(5);
        }
        return 0;
    }

    /** SIGTERM to the API server alone, as the container runtime signals a container's first process. */
    @Override
    public void sigterm() {
        container.sigterm();
    }

    @Override
    public void kill() {
        container.kill();
    }

    @Override
    public boolean exited() {
        return container.exited();
    }

    Process process() {
        return process;
    }

    boolean exitsWithin(Duration limit) throws InterruptedException {
        return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
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
