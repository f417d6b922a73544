package dev.ebb.operator.sim;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * llm-d's routing proxy (pd-sidecar) in front of a decode engine, as a real proxying process: it listens on the role's
 * port and sends every request to the engine on the Pod's own address, streaming the answer through as it comes.
 * Read in llm-d/llm-d-router at v0.10.0:
 * <ul>
 *   <li>pkg/sidecar/proxy/proxy.go, createRoutes: {@code GET /health} is its own and always 200; every other path
 *       (completions without a prefill header, /metrics, /v1/models) goes to the decoder proxy;</li>
 *   <li>pkg/sidecar/proxy/proxy_helpers.go, createDecoderProxyHandler: an httputil.ReverseProxy to the model server,
 *       flushing an event stream at once, answering 503 when the engine refuses the connection and 502 otherwise;</li>
 *   <li>on SIGTERM, cmd/pd-sidecar/main.go's signal context ends Start: startHTTP runs http.Server.Shutdown in a
 *       goroutine, but Serve returns at once, main returns and the process exits without waiting for it, so every
 *       stream through the proxy ends within moments of the signal.</li>
 * </ul>
 * Prefill/decode disaggregation (the {@code x-prefiller-host-port} header) is not modelled: the test world's
 * requests carry none.
 */
public final class FakeRoutingProxy implements AutoCloseable {
    private final HttpServer server;
    private final URI engine;
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();
    private final ExecutorService threads = Executors.newCachedThreadPool(DaemonThreads.named("fake-routing-proxy"));
    private final Set<HttpExchange> open = ConcurrentHashMap.newKeySet();
    private volatile boolean exited;

    private FakeRoutingProxy(String host, int port, int enginePort) throws IOException {
        this.engine = URI.create("http://" + host + ":" + enginePort);
        this.server = HttpServer.create(new InetSocketAddress(host, port), 64);
        server.setExecutor(threads);
        server.createContext("/", this::forward);
        server.start();
    }

    /** Listens on {@code host:port} and proxies to the engine at {@code host:enginePort}. */
    public static FakeRoutingProxy start(String host, int port, int enginePort) throws IOException {
        return new FakeRoutingProxy(host, port, enginePort);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public boolean exited() {
        return exited;
    }

    /** SIGTERM, which pd-sidecar answers by exiting: nothing proxied through it survives. */
    public void sigterm() {
        kill();
    }

    public void kill() {
        exited = true;
        open.forEach(HttpExchange::close);
        server.stop(0);
        threads.shutdownNow();
    }

    @Override
    public void close() {
        kill();
    }

    private void forward(HttpExchange exchange) throws IOException {
        open.add(exchange);
        try {
            if (exchange.getRequestMethod().equals("GET")
                    && exchange.getRequestURI().getPath().equals("/health")) {
                exchange.sendResponseHeaders(200, -1);
                return;
            }
            HttpRequest.Builder request = HttpRequest.newBuilder(
                            engine.resolve(exchange.getRequestURI().toString()))
                    .method(
                            exchange.getRequestMethod(),
                            HttpRequest.BodyPublishers.ofByteArray(
                                    exchange.getRequestBody().readAllBytes()));
            String type = exchange.getRequestHeaders().getFirst("Content-Type");
            if (type != null) {
                request.header("Content-Type", type);
            }
            HttpResponse<InputStream> answer;
            try {
                answer = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            } catch (ConnectException e) {
                exchange.sendResponseHeaders(503, -1);
                return;
            } catch (IOException e) {
                exchange.sendResponseHeaders(502, -1);
                return;
            }
            answer.headers()
                    .firstValue("Content-Type")
                    .ifPresent(t -> exchange.getResponseHeaders().set("Content-Type", t));
            exchange.sendResponseHeaders(answer.statusCode(), 0);
            try (InputStream in = answer.body();
                    OutputStream out = exchange.getResponseBody()) {
                byte[] buffer = new byte[8192];
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            open.remove(exchange);
            exchange.close();
        }
    }
}
