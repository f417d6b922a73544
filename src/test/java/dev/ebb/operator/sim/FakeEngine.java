package dev.ebb.operator.sim;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.ebb.operator.api.v1alpha1.Engine;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.net.ssl.SSLContext;

/**
 * A stand-in for one engine container: a real HTTP server on its own loopback address that streams
 * OpenAI-style completions, counts the requests it holds in its in-flight gauges, and loads, lags and reacts to
 * SIGTERM the way the engine release it imitates does ({@link EngineBehaviour}).
 */
public final class FakeEngine implements EngineContainer, AutoCloseable {
    public enum State {
        LOADING,
        SERVING,
        DRAINING,
        EXITED
    }

    private static final Pattern MAX_TOKENS = Pattern.compile("\"max_tokens\"\\s*:\\s*(\\d+)");
    private static final Pattern TOKEN_MS = Pattern.compile("\"token_interval_ms\"\\s*:\\s*(\\d+)");
    static final int DEFAULT_TOKEN_MS = 50;
    private static final Duration STALL_POLL = Duration.ofMillis(50);
    /** The tokens vLLM counts for the one-word prompt the test world sends. */
    private static final int PROMPT_TOKENS = 2;

    private final Engine engine;
    private final String host;
    private final int port;
    private final String model;
    private final EngineFaults faults;
    private final EngineBehaviour behaviour;
    private final SSLContext tls;
    /** One listener on the engine's address and, for a Pod on the pod network, one on its Pod's loopback stand-in. */
    private final List<HttpServer> servers = new CopyOnWriteArrayList<>();

    private final ExecutorService threads = Executors.newCachedThreadPool(DaemonThreads.named("fake-engine"));
    /** Every request held over HTTP, counted in the gauges or not yet. */
    private final Map<Long, HttpExchange> running = new ConcurrentHashMap<>();
    /** The requests the gauges count: past tokenizing, not yet finished. */
    private final Set<Long> counted = ConcurrentHashMap.newKeySet();
    /** What {@link #counted} held from each change on, by System.nanoTime(), for gauges that lag. */
    private final NavigableMap<Long, Set<Long>> countedSince = new TreeMap<>();

    private final long startedNanos = System.nanoTime();
    private final AtomicLong ids = new AtomicLong();
    /** vLLM's request counters: the prompt tokens of requests that produced output, every token streamed, every request that ran to its end. */
    private final AtomicLong promptTokens = new AtomicLong();

    private final AtomicLong generationTokens = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();
    /**
     * SGLang's: requests that ended after reaching the scheduler. It serves its own warm-up request before it reports
     * ready (entrypoints/http_server.py _execute_server_warmup at 0.5.15; the real one shows 1 before any request of
     * ours: RealSglangIT), so the count starts at one.
     */
    private final AtomicLong ended;

    private final AtomicLong metricsReads = new AtomicLong();
    private final Set<InetSocketAddress> completionClients = ConcurrentHashMap.newKeySet();
    private final long createdEpochSeconds = System.currentTimeMillis() / 1000;
    private volatile State state;
    /** False once a drain's limit has passed: streams still open stay open and get nothing more. */
    private volatile boolean generating = true;
    /** True from the moment a drain that held nothing set out to exit, until a request found at its check calls it off. */
    private boolean exitUnderWay;

    private FakeEngine(
            Engine engine,
            String host,
            int port,
            String model,
            EngineFaults faults,
            EngineBehaviour behaviour,
            SSLContext tls)
            throws IOException {
        this.engine = engine;
        this.ended = new AtomicLong(engine == Engine.SGLANG ? 1 : 0);
        this.host = host;
        this.port = port;
        this.model = model;
        this.faults = faults;
        this.behaviour = behaviour;
        this.tls = tls;
        countedSince.put(startedNanos, Set.of());
        Duration load = behaviour.loadDelay;
        state = load.isZero() ? State.SERVING : State.LOADING;
        // vllm/entrypoints/openai/api_server.py, setup_server: the socket is bound before the engine loads but listened
        // on only once uvicorn serves, after it, so until then a connection is refused (read in recent sources). SGLang
        // 0.5.15 on CPU refused connections while it loaded and answered /health with 503 during its warm-up request
        // (RealSglangIT's start-up); the fake SGLang listens from its start and answers 503 throughout, which the
        // probes and the reads treat alike: neither is a page.
        boolean refuseWhileLoading = engine == Engine.VLLM && !load.isZero();
        if (!refuseWhileLoading) {
            listen();
        }
        if (!load.isZero()) {
            threads.submit(() -> finishLoading(load, refuseWhileLoading));
        }
    }

    public static FakeEngine start(Engine engine, String host, int port, String model) throws IOException {
        return new FakeEngine(engine, host, port, model, new EngineFaults(), EngineBehaviour.of(engine), null);
    }

    public static FakeEngine start(
            Engine engine, String host, int port, String model, EngineFaults faults, SSLContext tls)
            throws IOException {
        return new FakeEngine(engine, host, port, model, faults, EngineBehaviour.of(engine), tls);
    }

    public static FakeEngine start(
            Engine engine,
            String host,
            int port,
            String model,
            EngineFaults faults,
            EngineBehaviour behaviour,
            SSLContext tls)
            throws IOException {
        return new FakeEngine(engine, host, port, model, faults, behaviour, tls);
    }

    /** Binds every address or none: a second bind that fails leaves the first one closed again. */
    private synchronized void listen() throws IOException {
        try {
            for (String address : new LinkedHashSet<>(List.of(host, LoopbackAddresses.loopbackOf(host)))) {
                servers.add(listenOn(new InetSocketAddress(address, port)));
            }
        } catch (IOException e) {
            stopListening();
            throw e;
        }
    }

    private HttpServer listenOn(InetSocketAddress address) throws IOException {
        HttpServer created;
        if (tls != null) {
            HttpsServer https = HttpsServer.create(address, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(tls));
            created = https;
        } else {
            created = HttpServer.create(address, 64);
        }
        created.setExecutor(threads);
        created.createContext("/v1/completions", this::complete);
        created.createContext("/metrics", this::metrics);
        created.createContext("/health", this::health);
        created.createContext("/v1/models", this::models);
        created.start();
        return created;
    }

    /** The model is in: the engine serves, on a listener it opens only now if it refused until then. */
    private void finishLoading(Duration load, boolean listenNow) {
        try {
            Thread.sleep(load.toMillis());
            long giveUp = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            synchronized (this) {
                while (listenNow && state == State.LOADING) {
                    try {
                        listen();
                        break;
                    } catch (BindException e) {
                        // a container restarted on the same address may find it held a moment longer
                        if (System.nanoTime() > giveUp) {
                            throw e;
                        }
                        wait(50);
                    }
                }
                if (state == State.LOADING) {
                    state = State.SERVING;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            kill();
        }
    }

    public Engine engine() {
        return engine;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public EngineFaults faults() {
        return faults;
    }

    public EngineBehaviour behaviour() {
        return behaviour;
    }

    public State state() {
        return state;
    }
    /** Requests held over HTTP, whether the gauges count them yet or not. */
    public int inFlight() {
        return running.size();
    }
    /** Requests the gauges count right now, before any lag of theirs. */
    public int counted() {
        return counted.size();
    }
    /** Requests for /metrics received so far, answered or not. */
    public long metricsReads() {
        return metricsReads.get();
    }
    /** Distinct client connections completions arrived on so far: a caller that pools keep-alive connections reuses them. */
    public int completionConnections() {
        return completionClients.size();
    }

    public URI uri(String path) {
        return URI.create((tls != null ? "https" : "http") + "://" + host + ":" + port + path);
    }

    /**
     * What the engine does on SIGTERM, per its {@link SigtermConduct}: abort everything and exit, or refuse new
     * requests and keep generating the ones it holds until they finish, its drain limit passes or it is killed.
     * An engine still loading exits at once: vLLM's setup_server installs a SIGTERM handler that interrupts the
     * start-up (vllm/entrypoints/openai/api_server.py; tag not checked).
     */
    @Override
    public synchronized void sigterm() {
        if (state == State.DRAINING || state == State.EXITED) {
            return;
        }
        SigtermConduct conduct = behaviour.onSigterm;
        if (state == State.LOADING || !conduct.drains()) {
            kill();
            return;
        }
        state = State.DRAINING;
        exitWhenDrained();
        conduct.limit()
                .ifPresent(limit -> threads.submit(() -> {
                    try {
                        Thread.sleep(limit.toMillis());
                        // vLLM's --shutdown-timeout: when it passes, the engine core is killed and generation stops;
                        // uvicorn still waits on each stream left open, so the process stays until it is killed
                        // (observed at vLLM 0.32.0: with 16 s of a stream left at a 10 s timeout it outlived 120 s; the
                        // engine tier in docs/contributing/real-tiers.md)
                        generating = false;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
    }

    /** SIGKILL: every connection is dropped where it stands. */
    @Override
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
        servers.forEach(server -> server.stop(0));
        servers.clear();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
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
        if (engine == Engine.VLLM && state == State.DRAINING) {
            // observed at vLLM 0.32.0 on CPU, given --shutdown-timeout (the engine tier's RealVllmSigtermIT)
            sendJson(
                    exchange,
                    500,
                    "{\"error\":{\"message\":\"cannot schedule new futures after shutdown\",\"type\":\"InternalServerError\","
                            + "\"param\":null,\"code\":500}}");
            return;
        }
        // SGLang takes and serves a request that arrives during its drain, whatever /health says (observed at 0.5.15
        // on CPU: RealSglangSigtermIT)
        boolean serves = state == State.SERVING || engine == Engine.SGLANG && state == State.DRAINING;
        if (!serves) {
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
            return;
        }
        long id = ids.incrementAndGet();
        running.put(id, exchange);
        int tokens = intField(MAX_TOKENS, body, 16);
        int tokenMs = intField(TOKEN_MS, body, DEFAULT_TOKEN_MS);
        boolean scheduled = false;
        try (OutputStream out = exchange.getResponseBody()) {
            // vLLM's API server sends the stream's headers at once and tokenizes the prompt before the request reaches
            // the engine core, whose scheduler's running and waiting queues the gauges report (observed at vLLM 0.32.0
            // on CPU: headers after 5 to 42 ms, the gauges after 0.03 to 3.05 s as prompts grow to 6,000 words;
            // RealVllmIT)
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            out.flush();
            Thread.sleep(behaviour.tokenizing.toMillis());
            if (state == State.EXITED) {
                return;
            }
            count(id, true);
            scheduled = true;
            for (int i = 0; i < tokens; i++) {
                while (!generating && state != State.EXITED) {
                    Thread.sleep(STALL_POLL.toMillis());
                }
                if (state == State.EXITED) {
                    return;
                }
                out.write(("data: {\"id\":\"cmpl-" + id + "\",\"object\":\"text_completion\",\"model\":\"" + model
                                + "\",\"choices\":[{\"index\":0,\"text\":\" t" + i + "\",\"finish_reason\":null}]}\n\n")
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                if (i == 0) {
                    promptTokens.addAndGet(PROMPT_TOKENS);
                }
                generationTokens.incrementAndGet();
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
            if (scheduled) {
                ended.incrementAndGet();
            }
            count(id, false);
            running.remove(id);
            exitWhenDrained();
        }
    }

    private void count(long id, boolean in) {
        synchronized (countedSince) {
            boolean changed = in ? counted.add(id) : counted.remove(id);
            if (changed) {
                long now = System.nanoTime();
                countedSince.put(now, Set.copyOf(counted));
                // a lagging page shows at most the last change before now minus its lag, or the one before that
                // while it still shows the engine busy after it went idle; older ones go
                long lag = Math.max(
                        behaviour.busyGaugeLag.toNanos(),
                        behaviour.gaugeWriteDelay.toNanos() + behaviour.idleWriteAfter.toNanos());
                Long shownAtMost = countedSince.floorKey(now - lag);
                Long keep = shownAtMost == null ? null : countedSince.lowerKey(shownAtMost);
                if (keep != null) {
                    countedSince.headMap(keep, false).clear();
                }
            }
        }
    }

    /**
     * What the gauges show. SGLang's scheduler writes them only when it logs: every prefill batch, every
     * decode_log_interval decode steps (40 by default), and while idle once 30 s have passed since the last write
     * (python/sglang/srt/managers/scheduler_metrics_mixin.py, log_prefill_stats and log_decode_stats;
     * scheduler_runtime_checker_mixin.py, check_memory: "During idle time, also collect metrics every 30 seconds";
     * read in recent sources, tag not checked). Two ways to lag, both none unless a test sets them, so that suites of
     * SGLang retirements stay fast: as observed ({@link EngineBehaviour#timedAsObserved}), each change shows after a
     * delay while the engine is busy and the last busy page stays until the idle write; or, for the worst case, on a
     * fixed beat of {@link EngineBehaviour#busyGaugeLag}, so a page shows what the engine held up to that long ago,
     * busy or idle, and a new request may go unseen for the whole beat.
     */
    private Set<Long> shownInGauges() {
        long beat = behaviour.busyGaugeLag.toNanos();
        long writeDelay = behaviour.gaugeWriteDelay.toNanos();
        long idleWrite = behaviour.idleWriteAfter.toNanos();
        synchronized (countedSince) {
            long now = System.nanoTime();
            if (beat > 0) {
                long lastWrite = startedNanos + (now - startedNanos) / beat * beat;
                Map.Entry<Long, Set<Long>> then = countedSince.floorEntry(lastWrite);
                return then == null ? Set.of() : then.getValue();
            }
            if (writeDelay <= 0 && idleWrite <= 0) {
                return Set.copyOf(counted);
            }
            Map.Entry<Long, Set<Long>> written = countedSince.floorEntry(now - writeDelay);
            if (written == null || !written.getValue().isEmpty()) {
                return written == null ? Set.of() : written.getValue();
            }
            Map.Entry<Long, Set<Long>> lastBusy = countedSince.lowerEntry(written.getKey());
            boolean idleWritten = now - written.getKey() >= idleWrite;
            return lastBusy == null || idleWritten ? Set.of() : lastBusy.getValue();
        }
    }

    /** What a member's page shows of the requests whose data-parallel group runs there ({@link EngineBehaviour#dataParallelMembers}). */
    public Set<Long> shownOnMember(int member) {
        int members = behaviour.dataParallelMembers;
        Set<Long> shown = shownInGauges();
        return members == 1
                ? (member == 0 ? shown : Set.of())
                : shown.stream().filter(id -> id % members == member).collect(Collectors.toUnmodifiableSet());
    }

    /**
     * Exits once a drain holds nothing: at once, or at the engine's next look at its drain and after its teardown
     * ({@link EngineBehaviour#timedAsObserved}). A request taken meanwhile (SGLang serves during its drain) and
     * still held at that look keeps the engine draining; one taken during the teardown is dropped with the process.
     */
    private synchronized void exitWhenDrained() {
        if (state != State.DRAINING || !running.isEmpty() || exitUnderWay) {
            return;
        }
        long now = System.nanoTime();
        long check = nextDrainCheck(now);
        Duration teardown = behaviour.exitAfterDrain;
        if (check == now && teardown.isZero()) {
            state = State.EXITED;
            stopListening();
            return;
        }
        exitUnderWay = true;
        threads.submit(() -> {
            try {
                TimeUnit.NANOSECONDS.sleep(check - now);
                synchronized (this) {
                    if (!running.isEmpty()) {
                        exitUnderWay = false;
                        return;
                    }
                }
                Thread.sleep(teardown.toMillis());
                kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** The first of the engine's looks at its drain at or after {@code now}; {@code now} itself when it looks at once. */
    private long nextDrainCheck(long now) {
        long period = behaviour.drainCheckEvery.toNanos();
        if (period <= 0) {
            return now;
        }
        long sinceStart = now - startedNanos;
        return startedNanos + Math.max(1, (sinceStart + period - 1) / period) * period;
    }

    /** vLLM answers 200 while it drains (observed at vLLM 0.32.0, RealVllmSigtermIT); SGLang 503. */
    private void health(HttpExchange exchange) throws IOException {
        boolean up = state == State.SERVING || engine == Engine.VLLM && state == State.DRAINING;
        exchange.sendResponseHeaders(up ? 200 : 503, -1);
        exchange.close();
    }

    /**
     * The served model as each engine lists it: SGLang 0.5.15 answered
     * {@code {"object":"list","data":[{"id":"tiny","object":"model","created":1796312242,"owned_by":"sglang","root":"tiny","parent":null,"max_model_len":8192}]}}
     * here, vLLM 0.32.0 the same fields with {@code "owned_by":"vllm"}, the model's path as its root and a permission
     * list. SGLang's model gateway reads {@code owned_by} to tell the engine (smg 1.9.0,
     * model_gateway/src/workflow/steps/local/detect_backend.rs) and takes no worker it cannot tell.
     */
    private void models(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readAllBytes();
        String owner = engine == Engine.VLLM ? "vllm" : "sglang";
        String body = "{\"object\":\"list\",\"data\":[{\"id\":\"" + model + "\",\"object\":\"model\",\"created\":"
                + createdEpochSeconds + ",\"owned_by\":\"" + owner + "\",\"root\":\"" + model
                + "\",\"parent\":null,\"max_model_len\":8192}]}";
        sendJson(exchange, 200, body);
    }

    private static void sendJson(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
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
        String page = faults.notMetrics
                ? "<html><body>Welcome to nginx!</body></html>\n"
                : MetricsPage.render(
                        engine,
                        behaviour.gauges,
                        model,
                        shownOnMember(0),
                        new MetricsPage.RequestTotals(
                                promptTokens.get(), generationTokens.get(), finished.get(), ended.get()),
                        createdEpochSeconds,
                        faults.missingGauge,
                        faults.paddingBytes);
        byte[] bytes = page.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        // vLLM answers with a Content-Length (observed at 0.32.0: RealVllmIT). SGLang's page is chunked; the JDK server
        // would answer HTTP/1.0 unframed, where uvicorn with httptools chunks it all the same, so the fake frames it
        // itself there, and leaves HTTP/1.1 to the JDK's chunked stream, one chunk per flush.
        boolean lengthKnown = engine == Engine.VLLM;
        boolean frameByHand = !lengthKnown && "HTTP/1.0".equalsIgnoreCase(exchange.getProtocol());
        if (frameByHand) {
            exchange.getResponseHeaders().set("Transfer-Encoding", "chunked");
        }
        exchange.sendResponseHeaders(200, lengthKnown ? bytes.length : 0);
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
     * Where each piece of a /metrics answer ends. uvicorn sends every ASGI body message as a chunk, with no
     * Content-Length from prometheus_client's app, whatever the request's version (uvicorn 0.17.6 and 0.54.0,
     * uvicorn/protocols/http/httptools_impl.py, RequestResponseCycle.send; prometheus_client 0.16.0 and 0.26.0,
     * prometheus_client/asgi.py). SGLang mounts that app at /metrics (add_prometheus_middleware in
     * python/sglang/srt/utils.py, later python/sglang/srt/utils/common.py). vLLM mounts it too, but registers
     * prometheus-fastapi-instrumentator's GET /metrics before it, a plain starlette Response with a Content-Length,
     * and that route answers (vllm/entrypoints/serve/instrumentator/metrics.py at 0.32.0; the framing observed).
     * Either way a proxy in front, or TCP, may split the page anywhere, so the fake always sends it in several
     * pieces: one ending inside the first in-flight gauge's sample line, the others where this read's number puts
     * them. A trickle sends one byte per piece.
     */
    private int[] chunkEnds(String page, int length) {
        if (!faults.trickle.isZero()) {
            return IntStream.rangeClosed(1, length).toArray();
        }
        String gauge = behaviour.gauges.get(0);
        int line = page.indexOf("\n" + gauge + "{");
        int insideGauge = line < 0
                ? length / 2
                : page.substring(0, line + 1 + gauge.length() + 3).getBytes(StandardCharsets.UTF_8).length;
        Random cuts = new Random(metricsReads.get());
        return IntStream.concat(IntStream.of(insideGauge, length), cuts.ints(2, 1, Math.max(2, length)))
                .filter(end -> end > 0 && end <= length)
                .distinct()
                .sorted()
                .toArray();
    }

    private static int intField(Pattern pattern, String body, int fallback) {
        Matcher m = pattern.matcher(body);
        return m.find() ? Integer.parseInt(m.group(1)) : fallback;
    }
}
