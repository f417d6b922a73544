package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.HookFixtures;
import dev.ebb.operator.drain.HookRun;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.LoopbackAddresses;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The read script and the hook against a real uvicorn serving prometheus_client's ASGI app, as SGLang serves
 * /metrics: httptools chunks the answer, even to the read script's HTTP/1.0 request. (vLLM 0.32.0 mounts the same
 * app but answers from another route first, with a Content-Length: the engine tier's RealVllmIT.) The server runs under
 * the python3 the test world runs hooks and reads with (the distribution's first, see {@link LocalProcesses}), since
 * that is the one that sees Debian's packages; a version manager's python3 found first on PATH does not.
 */
class UvicornMetricsTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    private static final int PORT = 8000;
    private static final String PACKAGES = "python3-uvicorn python3-httptools python3-prometheus-client";
    /** A vLLM-shaped page with the given count on engine 1, served chunked; many series make it long. */
    private static final String SERVER = """
            import sys
            import prometheus_client
            import uvicorn

            host, port, running = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
            registry = prometheus_client.CollectorRegistry()
            labels = ["engine", "model_name"]
            gauges = {name: prometheus_client.Gauge(name, "Requests in this state.", labels, registry=registry)
                      for name in ("vllm:num_requests_running", "vllm:num_requests_waiting")}
            for engine in ("0", "1"):
                for gauge in gauges.values():
                    gauge.labels(engine, "Qwen/Qwen3-8B").set(0)
            gauges["vllm:num_requests_running"].labels("1", "Qwen/Qwen3-8B").set(running)
            latency = prometheus_client.Histogram("vllm:e2e_request_latency_seconds", "Latency.", labels, registry=registry,
                                                  buckets=[0.1 * i for i in range(1, 200)])
            latency.labels("0", "Qwen/Qwen3-8B").observe(1.5)
            uvicorn.run(prometheus_client.make_asgi_app(registry), host=host, port=port, http="httptools", log_level="warning")
            """;

    private final List<Process> servers = new ArrayList<>();

    @BeforeAll
    static void packagesArePresent() throws Exception {
        Process probe = LocalProcesses.builder(List.of("python3", "-c", "import uvicorn, httptools, prometheus_client"))
                .redirectErrorStream(true)
                .start();
        String output = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (probe.waitFor() != 0) {
            fail("a real uvicorn needs Debian's " + PACKAGES + " (apt-get install -y " + PACKAGES + "): " + output);
        }
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (Process server : servers) {
            server.destroy();
            server.waitFor(5, TimeUnit.SECONDS);
        }
    }

    private String serve(int running) throws IOException {
        String host = ADDRESSES.next();
        Path log = Files.createTempFile("uvicorn", ".log");
        log.toFile().deleteOnExit();
        Process server = LocalProcesses.builder(
                        List.of("python3", "-c", SERVER, host, Integer.toString(PORT), Integer.toString(running)))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        servers.add(server);
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    assertThat(server.isAlive())
                            .as("uvicorn exited: %s", Files.readString(log))
                            .isTrue();
                    return listens(host);
                });
        return host;
    }

    private static boolean listens(String host) {
        try (Socket ignored = new Socket(host, PORT)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static ExecResult.Exited read(String host) throws Exception {
        List<String> argv = List.of(
                "python3",
                "-c",
                ReadCommand.SCRIPT,
                "--host",
                host,
                "--port",
                Integer.toString(PORT),
                "--path",
                "/metrics");
        Process process = LocalProcesses.builder(argv)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        byte[] stdout = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return new ExecResult.Exited(process.exitValue(), stdout);
    }

    @Test
    void readScriptHandsTheParserTheDecodedPageOfABusyEngine() throws Exception {
        String host = serve(3);

        ExecResult.Exited result = read(host);

        assertThat(result.code()).isZero();
        assertThat(new String(result.stdout(), StandardCharsets.UTF_8))
                .startsWith("# HELP ")
                .doesNotContain("\r\n");
        assertThat(ReadOutcome.interpret(result, InFlightGauges.of(Engine.VLLM)))
                .isEqualTo(new Reading.Busy(3));
    }

    @Test
    void hookReadsAnIdleEngineIdleThroughUvicornsFraming() throws Exception {
        String host = serve(0);

        HookRun run = HookRun.run(HookFixtures.hook(Engine.VLLM, 30, "http"), host);

        assertThat(run.lines())
                .as(String.join(" / ", run.lines()))
                .hasSize(3)
                .anyMatch(l -> l.endsWith(" read: idle (sum 0), 1 in a row"))
                .last()
                .asString()
                .endsWith("idle on two consecutive reads");
    }
}
