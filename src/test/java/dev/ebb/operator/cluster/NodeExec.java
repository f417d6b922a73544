package dev.ebb.operator.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.ExecResult;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.LocalExec;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's exec endpoint of a {@link ClusterNode}, so that pods/exec through the real API server reaches the
 * node: {@code node-exec} (src/test/go/kube/cmd/node-exec, the kubelet's own streaming code) serves the kubelet's
 * {@code /exec} path over TLS and hands each command to the runner here, which runs it as the test world's exec does
 * ({@link LocalExec}: the argv as given, against the Pod's own address, stdin streamed to it) and answers with its
 * output and exit code as soon as it exits, while a client that cannot close stdin still holds it open.
 */
final class NodeExec implements AutoCloseable {
    /** What one command may print before the runner refuses it; the operator's own cap is far lower. */
    static final int MAX_OUTPUT = 16 << 20;

    private static final Duration LONGEST = Duration.ofMinutes(2);
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpServer runner;
    private final Process server;
    private final int port;
    private final LocalExec exec = new LocalExec();

    private NodeExec(HttpServer runner, Process server, int port) {
        this.runner = runner;
        this.server = server;
        this.port = port;
    }

    static NodeExec start(KubernetesClient client, ControlPlaneRelease release, Path directory) throws IOException {
        Files.createDirectories(directory);
        HttpServer runner = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        runner.setExecutor(Executors.newCachedThreadPool(DaemonThreads.named("node-exec-runner")));
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Process server = new ProcessBuilder(
                        release.binary("node-exec").toString(),
                        "--listen",
                        "127.0.0.1:" + port,
                        "--cert-dir",
                        directory.toAbsolutePath().toString(),
                        "--runner",
                        "http://127.0.0.1:" + runner.getAddress().getPort() + "/exec")
                .redirectError(directory.resolve("node-exec.log").toFile())
                .start();
        NodeExec node = new NodeExec(runner, server, port);
        runner.createContext("/exec", exchange -> node.answer(client, exchange));
        runner.start();
        node.awaitListening();
        return node;
    }

    private void awaitListening() throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        });
        try {
            String said = line.get(30, TimeUnit.SECONDS);
            if (said == null || !said.startsWith("listening ")) {
                throw new IOException("node-exec did not start: " + said);
            }
        } catch (Exception e) {
            close();
            throw new IOException("node-exec did not start", e);
        }
    }

    /** The port the Node names as its kubelet's. */
    int port() {
        return port;
    }

    private void answer(KubernetesClient client, HttpExchange exchange) throws IOException {
        try (exchange) {
            JsonNode asked;
            InputStream body = new BufferedInputStream(exchange.getRequestBody());
            try {
                asked = JSON.readTree(headerLine(body));
            } catch (IOException e) {
                respond(exchange, 400, "unreadable request: " + e.getMessage());
                return;
            }
            Pod pod = client.pods()
                    .inNamespace(asked.path("namespace").asText())
                    .withName(asked.path("pod").asText())
                    .get();
            if (pod == null) {
                respond(
                        exchange,
                        404,
                        "pod " + asked.path("namespace").asText() + "/"
                                + asked.path("pod").asText() + " not found");
                return;
            }
            List<String> argv = new ArrayList<>();
            asked.path("command").forEach(arg -> argv.add(arg.asText()));
            InputStream stdin = asked.path("stdinFollows").asBoolean() ? body : InputStream.nullInputStream();
            ExecResult result = exec.exec(pod, argv, stdin, new ExecLimits(MAX_OUTPUT, LONGEST))
                    .await()
                    .atMost(LONGEST.plusSeconds(5));
            if (result instanceof ExecResult.Exited exited) {
                ObjectNode answer = JSON.createObjectNode()
                        .put("stdout", Base64.getEncoder().encodeToString(exited.stdout()))
                        .put("stderr", "")
                        .put("exitCode", exited.code());
                respond(exchange, 200, answer.toString());
            } else if (result instanceof ExecResult.Overflowed overflowed) {
                respond(exchange, 500, "output over " + overflowed.capBytes() + " bytes");
            } else if (result instanceof ExecResult.TimedOut timedOut) {
                respond(exchange, 500, "still running after " + timedOut.deadline());
            } else if (result instanceof ExecResult.Failed failed) {
                respond(exchange, 500, failed.why());
            }
        }
    }

    /** The request's first line, its JSON; what follows it is the command's stdin. */
    private static byte[] headerLine(InputStream body) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = body.read(); b != '\n'; b = body.read()) {
            if (b < 0 || line.size() >= MAX_OUTPUT) {
                throw new IOException("no request line within " + MAX_OUTPUT + " bytes");
            }
            line.write(b);
        }
        return line.toByteArray();
    }

    private static void respond(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.destroyForcibly();
        runner.stop(0);
        exec.close();
    }
}
