package dev.ebb.operator.drain;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ebb.operator.BundledScripts;
import dev.ebb.operator.sim.LocalProcesses;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The preStop hook of an llm-d router's Envoy, run by bash against an admin interface that answers as Envoy 1.36.2
 * did when it was run here (the nearest release served as a wheel to the pinned v1.33.2): POST /healthcheck/fail
 * answers 200 "OK", a GET of it 405; /stats?filter= answers {@code <name>: <value>} lines. Each test has its own admin
 * interface, directory and hook process, so they run at once.
 */
@Execution(ExecutionMode.CONCURRENT)
class EnvoyDrainScriptTest {
    private static final String GAUGE = "http.http-8081.downstream_rq_active";

    @TempDir
    Path dir;

    private HttpServer admin;
    private final List<String> requests = Collections.synchronizedList(new ArrayList<>());

    /** A fake admin interface whose /stats answer is the body for the n-th read (from 0). */
    private int admin(IntFunction<String> statsBody) throws IOException {
        return admin(InetAddress.getLoopbackAddress(), statsBody);
    }

    private int admin(InetAddress address, IntFunction<String> statsBody) throws IOException {
        AtomicInteger reads = new AtomicInteger();
        admin = HttpServer.create(new InetSocketAddress(address, 0), 0);
        admin.setExecutor(Executors.newCachedThreadPool());
        admin.createContext("/", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI());
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/healthcheck/fail")) {
                if (exchange.getRequestMethod().equals("POST")) {
                    answer(exchange, 200, "OK\n");
                } else {
                    answer(exchange, 405, "Method GET not allowed, POST required.\n");
                }
            } else if (path.equals("/stats")) {
                String body = statsBody.apply(reads.getAndIncrement());
                answer(exchange, body == null ? 500 : 200, body == null ? "" : body);
            } else {
                answer(exchange, 404, "");
            }
        });
        admin.start();
        return admin.getAddress().getPort();
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @AfterEach
    void stop() {
        if (admin != null) {
            admin.stop(0);
        }
    }

    private record Run(Duration took, int exitCode, List<String> lines) {}

    private Run run(String... args) throws Exception {
        Process process = start(args);
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("the hook returned")
                .isTrue();
        return finished(process);
    }

    private long started;
    private Path log;

    private Process start(String... args) throws IOException {
        Path script = dir.resolve("drain-envoy.sh");
        Files.writeString(script, BundledScripts.load("ebb/drain-envoy.sh"));
        List<String> argv = new ArrayList<>(List.of("bash", "--noprofile", "--norc", script.toString()));
        argv.addAll(List.of(args));
        log = dir.resolve("hook.log");
        started = System.nanoTime();
        // stderr to a file: a pipe's end could leak into a process another test starts at the same moment
        return LocalProcesses.builder(argv)
                .directory(dir.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(log.toFile())
                .start();
    }

    private Run finished(Process process) throws IOException {
        return new Run(Duration.ofNanos(System.nanoTime() - started), process.exitValue(), Files.readAllLines(log));
    }

    private static String gauge(int value) {
        return GAUGE + ": " + value + "\n";
    }

    @Test
    void envoysHealthCheckFailsFirstThenTheHookReturnsOnceNoRequestIsInFlight() throws Exception {
        int port = admin(read -> gauge(read < 3 ? 2 - read / 2 : 0));

        Run run = run("1", "30", "127.0.0.1", Integer.toString(port), GAUGE);

        assertThat(run.exitCode()).isZero();
        assertThat(requests.get(0)).isEqualTo("POST /healthcheck/fail");
        assertThat(requests.subList(1, requests.size()))
                .hasSize(4)
                .allSatisfy(r -> assertThat(r).isEqualTo("GET /stats?filter=" + GAUGE));
        // the settle, then reads a second apart until the fourth finds none in flight
        assertThat(run.took()).isBetween(Duration.ofSeconds(4), Duration.ofSeconds(15));
        assertThat(run.lines()).first().asString().contains("health check failed");
        assertThat(run.lines()).last().asString().contains("no request in flight");
    }

    /** The test world gives each Pod a loopback address of its own, and a kubelet could run the hook in any namespace. */
    @Test
    void theAdminInterfaceIsAskedAtTheAddressTheHookIsGiven() throws Exception {
        int port = admin(InetAddress.getByName("127.0.0.23"), read -> gauge(0));

        Run run = run("0", "30", "127.0.0.23", Integer.toString(port), GAUGE);

        assertThat(run.exitCode()).isZero();
        assertThat(requests).containsExactly("POST /healthcheck/fail", "GET /stats?filter=" + GAUGE);
        assertThat(run.took()).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void anIdleEnvoyStillServesThroughTheSettle() throws Exception {
        int port = admin(read -> gauge(0));

        Run run = run("3", "30", "127.0.0.1", Integer.toString(port), GAUGE);

        assertThat(run.exitCode()).isZero();
        assertThat(run.took())
                .as("the Service's endpoints drop the Pod meanwhile")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        assertThat(requests).hasSize(2);
    }

    @Test
    void aGaugeThatCannotBeReadCountsAsBusyUntilTheDrainsBound() throws Exception {
        for (IntFunction<String> unreadable : List.<IntFunction<String>>of(
                read -> null,
                read -> GAUGE + ": many\n",
                read -> GAUGE + ": -1\n",
                read -> "http.admin.downstream_rq_active: 0\n",
                read -> "",
                read -> (GAUGE + "_total: 0\n").repeat(500) + gauge(0))) {
            requests.clear();
            int port = admin(unreadable);

            Run run = run("0", "1", "127.0.0.1", Integer.toString(port), GAUGE);

            assertThat(run.exitCode()).isZero();
            assertThat(run.took()).as("held to the drain's bound").isGreaterThanOrEqualTo(Duration.ofSeconds(1));
            assertThat(run.lines())
                    .last()
                    .asString()
                    .contains("(unreadable) after")
                    .contains("the drain's bound");
            admin.stop(0);
            admin = null;
        }
    }

    @Test
    void withNoAdminInterfaceTheHookStillHoldsToTheDrainsBound() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }

        Run run = run("0", "2", "127.0.0.1", Integer.toString(closed), GAUGE);

        assertThat(run.took()).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(run.lines()).first().asString().contains("did not take /healthcheck/fail");
        assertThat(run.lines()).last().asString().contains("the drain's bound");
    }

    @Test
    void anAdminInterfaceThatNeverAnswersCountsAsBusyAndTheHookStaysBounded() throws Exception {
        try (ServerSocket stalled = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<Socket> held = Collections.synchronizedList(new ArrayList<>());
            Thread acceptor = new Thread(() -> {
                while (!stalled.isClosed()) {
                    try {
                        held.add(stalled.accept());
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();

            Run run = run("0", "3", "127.0.0.1", Integer.toString(stalled.getLocalPort()), GAUGE);

            // each request gives up after 2 s without an answer; the bound is passed by one stalled read at most
            assertThat(run.took()).isBetween(Duration.ofSeconds(3), Duration.ofSeconds(12));
            assertThat(run.lines()).last().asString().contains("(unreadable)");
            acceptor.interrupt();
        }
    }

    @Test
    void argumentsThatCannotBeUsedHoldThePodAndRunNothing() throws Exception {
        int port = admin(read -> gauge(0));
        Path marker = dir.resolve("ran");
        for (List<String> args : List.of(
                List.of("5", "$(touch " + marker + ")", "127.0.0.1", Integer.toString(port), GAUGE),
                List.of("5", "30", "127.0.0.1", Integer.toString(port), GAUGE + "; touch " + marker),
                List.of("-1", "30", "127.0.0.1", Integer.toString(port), GAUGE),
                List.of("5", "30", "127.0.0.1$(touch " + marker + ")", Integer.toString(port), GAUGE),
                List.of("5", "30", "localhost", Integer.toString(port), GAUGE),
                List.of("5", "30"),
                List.of("5", "9".repeat(100), "127.0.0.1", Integer.toString(port), GAUGE))) {
            Process process = start(args.toArray(String[]::new));

            assertThat(process.waitFor(2, TimeUnit.SECONDS))
                    .as("still holding for " + args)
                    .isFalse();
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly().waitFor();
            assertThat(Files.readString(log)).contains("arguments cannot be used");
        }
        assertThat(marker).doesNotExist();
        assertThat(requests).as("nothing asked of Envoy").isEmpty();
    }
}
