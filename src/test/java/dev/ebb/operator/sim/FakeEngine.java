package dev.ebb.operator.sim;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import javax.net.ssl.SSLContext;

/**
 * A stand-in for one engine container: a real HTTP server on its own loopback address that streams
 * OpenAI-style completions, counts exactly the requests it holds in its in-flight gauges, and reacts to
 * SIGTERM the way the engine it imitates does.
 */
public final class FakeEngine implements AutoCloseable {
    public enum State { SERVING, DRAINING, EXITED }

    private static final Pattern MAX_TOKENS = Pattern.compile("\"max_tokens\"\\s*:\\s*(\\d+)");
    private static final Pattern TOKEN_MS = Pattern.compile("\"token_interval_ms\"\\s*:\\s*(\\d+)");
    static final int DEFAULT_TOKEN_MS = 50;

    private final Engine engine;
    private final String host;
    private final int port;
    private final String model;
    private final EngineFaults faults;
    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool(DaemonThreads.named("fake-engine"));
    private final Map<Long, HttpExchange> running = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong arrived = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();
    private final AtomicLong metricsReads = new AtomicLong();
    private final Set<InetSocketAddress> completionClients = ConcurrentHashMap.newKeySet();
    private final long createdEpochSeconds = System.currentTimeMillis() / 1000;
    private volatile State state = State.SERVING;

    private FakeEngine(Engine engine, String host, int port, String model, EngineFaults faults, SSLContext tls) throws IOException {
        this.engine = engine;
        this.host = host;
        this.port = port;
        this.model = model;
        this.faults = faults;
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (tls != null) {
            HttpsServer https = HttpsServer.create(address, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(tls));
            server = https;
        } else {
            server = HttpServer.create(address, 64);
        }
        server.setExecutor(threads);
        server.createContext("/v1/completions", this::complete);
        server.createContext("/metrics", this::metrics);
        server.createContext("/health", this::health);
        server.start();
    }

    public static FakeEngine start(Engine engine, String host, int port, String model) throws IOException {
        return new FakeEngine(engine, host, port, model, new EngineFaults(), null);
    }

    public static FakeEngine start(Engine engine, String host, int port, String model, EngineFaults faults, SSLContext tls)
            throws IOException {
        return new FakeEngine(engine, host, port, model, faults, tls);
    }

    public Engine engine() { return engine; }
    public String host() { return host; }
    public int port() { return port; }
    public EngineFaults faults() { return faults; }
    public State state() { return state; }
    public int inFlight() { return running.size(); }
    /** Requests for /metrics received so far, answered or not. */
    public long metricsReads() { return metricsReads.get(); }
    /** Distinct client connections completions arrived on so far: a caller that pools keep-alive connections reuses them. */
    public int completionConnections() { return completionClients.size(); }

    public URI uri(String path) {
        return URI.create((server instanceof HttpsServer ? "https" : "http") + "://" + host + ":" + port + path);
    }

    /**
     * What the engine does on SIGTERM. vLLM aborts every running request at once and exits; SGLang stops
     * taking new requests and keeps generating the ones it holds until they finish or it is killed.
     */
    public synchronized void sigterm() {
        if (state != State.SERVING) {
            return;
        }
        if (engine == Engine.VLLM) {
            kill();
        } else {
            state = running.isEmpty() ? State.EXITED : State.DRAINING;
            if (state == State.EXITED) {
                stopListening();
            }
        }
    }

    /** SIGKILL: every connection is dropped where it stands. */
    public synchronized void kill() {
        state = State.EXITED;
        running.values().forEach(HttpExchange::close);
        stopListening();
        threads.shutdownNow();
    }

    /**
     * Stops the server with its port free on return, as an exited process leaves it. The JDK's server closes its
     * listening socket only once its dispatcher thread has ended, and waits for that with a join, which an
     * interrupted caller (a kubelet worker being shut down) leaves at once: the port would still be taken when a
     * restarted container binds it again. So the wait runs uninterrupted, and the interrupt is kept for after.
     */
    private void stopListening() {
        boolean interrupted = Thread.interrupted();
        server.stop(0);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    public boolean exited() {
        return state == State.EXITED;
    }

    @Override
    public void close() {
        kill();
    }

    private void complete(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        completionClients.add(exchange.getRemoteAddress());
        if (state != State.SERVING) {
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
            return;
        }
        long id = ids.incrementAndGet();
        arrived.incrementAndGet();
        running.put(id, exchange);
        int tokens = intField(MAX_TOKENS, body, 16);
        int tokenMs = intField(TOKEN_MS, body, DEFAULT_TOKEN_MS);
        try (OutputStream out = exchange.getResponseBody()) {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            for (int i = 0; i < tokens; i++) {
                if (state == State.EXITED) {
                    return;
                }
                out.write(("data: {\"id\":\"cmpl-" + id + "\",\"object\":\"text_completion\",\"model\":\"" + model
                        + "\",\"choices\":[{\"index\":0,\"text\":\" t" + i + "\",\"finish_reason\":null}]}\n\n")
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                Thread.sleep(tokenMs);
            }
            if (state != State.EXITED) {
                out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                finished.incrementAndGet();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client went away or the engine was killed: either way the request is over
        } finally {
            running.remove(id);
            exitWhenDrained();
        }
    }

    private synchronized void exitWhenDrained() {
        if (state == State.DRAINING && running.isEmpty()) {
            state = State.EXITED;
            stopListening();
        }
    }

    private void health(HttpExchange exchange) throws IOException {
        exchange.sendResponseHeaders(state == State.SERVING ? 200 : 503, -1);
        exchange.close();
    }

    private void metrics(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readAllBytes();
        metricsReads.incrementAndGet();
        try {
            Thread.sleep(faults.metricsDelay.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (faults.metricsStatus != 200) {
            exchange.sendResponseHeaders(faults.metricsStatus, -1);
            exchange.close();
            return;
        }
        String page = faults.notMetrics ? "<html><body>Welcome to nginx!</body></html>\n"
                : MetricsPage.render(engine, model, running.keySet(), arrived.get(), finished.get(),
                        createdEpochSeconds, faults.missingGauge, faults.paddingBytes);
        byte[] bytes = page.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        // The JDK server would answer HTTP/1.0 unframed; uvicorn with httptools chunks it all the same, so the fake
        // frames it itself there, and leaves HTTP/1.1 to the JDK's chunked stream, one chunk per flush.
        boolean frameByHand = "HTTP/1.0".equalsIgnoreCase(exchange.getProtocol());
        if (frameByHand) {
            exchange.getResponseHeaders().set("Transfer-Encoding", "chunked");
        }
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
            int from = 0;
            for (int end : chunkEnds(page, bytes.length)) {
                if (frameByHand) {
                    out.write((Integer.toHexString(end - from) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                }
                out.write(bytes, from, end - from);
                if (frameByHand) {
                    out.write(CRLF);
                }
                out.flush();
                from = end;
                Thread.sleep(faults.trickle.toMillis());
            }
            if (frameByHand) {
                out.write(LAST_CHUNK);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] LAST_CHUNK = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /**
     * Where each chunk of a /metrics answer ends. uvicorn sends every ASGI body message as a chunk, with no
     * Content-Length from prometheus_client's app, whatever the request's version (uvicorn 0.17.6,
     * uvicorn/protocols/http/httptools_impl.py, RequestResponseCycle.send; prometheus_client 0.16.0,
     * prometheus_client/asgi.py). Both engines mount that app at /metrics: vLLM's mount_metrics in
     * vllm/entrypoints/openai/api_server.py, SGLang's add_prometheus_middleware in python/sglang/srt/utils.py (later
     * python/sglang/srt/utils/common.py).
     * The app sends the page in one message, but a middleware or a proxy in front may split it anywhere, so the fake
     * always sends several: one ending inside the first in-flight gauge's sample line, the others where this read's
     * number puts them. A trickle sends one byte per chunk.
     */
    private int[] chunkEnds(String page, int length) {
        if (!faults.trickle.isZero()) {
            return IntStream.rangeClosed(1, length).toArray();
        }
        String gauge = InFlightGauges.of(engine).get(0);
        int line = page.indexOf("\n" + gauge + "{");
        int insideGauge = line < 0 ? length / 2
                : page.substring(0, line + 1 + gauge.length() + 3).getBytes(StandardCharsets.UTF_8).length;
        Random cuts = new Random(metricsReads.get());
        return IntStream.concat(IntStream.of(insideGauge, length), cuts.ints(2, 1, Math.max(2, length)))
                .filter(end -> end > 0 && end <= length).distinct().sorted().toArray();
    }

    private static int intField(Pattern pattern, String body, int fallback) {
        Matcher m = pattern.matcher(body);
        return m.find() ? Integer.parseInt(m.group(1)) : fallback;
    }
}
