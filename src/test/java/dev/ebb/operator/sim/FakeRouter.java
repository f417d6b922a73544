package dev.ebb.operator.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterAdmin;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;

/**
 * One replica of a router in front of a deployment's Pods, behaving as the released router of its kind does: it
 * learns of the Pods through a watch with that router's own rules and lag ({@link RouterDiscovery}), serves clients
 * on a loopback address of its own, picks an engine per request, streams the engine's answer back chunk by chunk
 * over pooled keep-alive connections, and answers the operator's question in that router's own shape
 * ({@link FakeRouterPages}). It can be taken down.
 *
 * <p>A router Deployment of several replicas is several instances, each with its own watch, view, dispatch counts
 * and answer, as the released routers keep their endpoints in their own process.
 */
public final class FakeRouter implements LoadGenerator.Target, AutoCloseable {
    /**
     * A response header naming the Pod that served the request: the test world's own bookkeeping. llm-d's Envoy
     * routes on the request header x-gateway-destination-endpoint that the picker sets (llm-d-router v0.10.0
     * pkg/epp/metadata/consts.go); none of the routers tells the client, so the fake adds this one.
     */
    public static final String SERVED_BY = "x-ebb-sim-served-by";

    private static final String MODEL = "m";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** HttpServer.stop multiplies its delay by 1000 in an int. */
    private static final long MAX_STOP_SECONDS = 2_000_000;

    /** One request sent to one Pod. */
    public record Dispatch(String pod, Instant at) {}

    /**
     * How the router's discovery is timed.
     *
     * @param discoveryLag between a Pod's change and the router acting on it; none as released: smg 1.9.0 listed a
     *     Pod 0.1 to 1.1 s after the test saw it Ready, polling every 100 ms (RealGatewayIT)
     * @param reconcileEvery smg's full relist; 60 s in the release (smg v1.9.0 model_gateway/src/main.rs sets
     *     ServiceDiscoveryConfig.check_interval to 60 s, with no flag to change it). The released smg 1.9.0 still
     *     listed a Pod taken out of its selector, and one turned NotReady, 10 s later (RealGatewayIT)
     * @param drainSettle how long smg keeps a removed worker listed as draining before it leaves (smg v1.9.0
     *     model_gateway/src/main.rs, --drain-settle-secs, 5 by default); the released smg 1.9.0 listed a deleted
     *     Pod's worker as draining and let it go 5.03 to 5.10 s after the delete (RealGatewayIT)
     */
    public record Timing(Duration discoveryLag, Duration reconcileEvery, Duration drainSettle) {
        public static Timing asReleased() {
            return new Timing(Duration.ZERO, Duration.ofSeconds(60), Duration.ofSeconds(5));
        }

        public Timing withDiscoveryLag(Duration lag) {
            return new Timing(lag, reconcileEvery, drainSettle);
        }

        public Timing withReconcileEvery(Duration period) {
            return new Timing(discoveryLag, period, drainSettle);
        }

        public Timing withDrainSettle(Duration settle) {
            return new Timing(discoveryLag, reconcileEvery, settle);
        }
    }

    private final RouterKind kind;
    private final String namespace;
    private final Map<String, String> selector;
    private final Timing timing;
    private final SharedIndexInformer<Pod> pods;
    private final ScheduledExecutorService discovery =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("fake-router-discovery"));
    private final ExecutorService serving = Executors.newCachedThreadPool(DaemonThreads.named("fake-router-client"));
    /**
     * Pooled keep-alive HTTP/1.1 connections to the engines, as each router's upstream client keeps them: Envoy's
     * HTTP/1.1 connection pool, which binds a request to a connection done with its previous one (Envoy's docs,
     * intro/arch_overview/upstream/connection_pooling, read for v1.18 and not re-read for the v1.33 llm-d's chart
     * runs), production-stack's one aiohttp.ClientSession with an unlimited TCPConnector
     * (vllm-stack-0.1.12 src/vllm_router/aiohttp_client.py), smg's reqwest Client with pool_max_idle_per_host(500)
     * (v1.9.0 model_gateway/src/app_context.rs).
     */
    private final HttpClient upstream = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();
    /** The endpoints the router holds, by Pod name. */
    private final Map<String, RoutedEndpoint> held = new ConcurrentHashMap<>();
    /** Each Pod as the router last saw it. Only the discovery thread touches it. */
    private final Map<String, Pod> seen = new HashMap<>();
    /** smg's discovery keeps its own set of the Pods it added, by name with their uid, apart from the worker registry. */
    private final Map<String, String> tracked = new ConcurrentHashMap<>();

    private final Map<String, Integer> ports = new ConcurrentHashMap<>();
    private final List<Dispatch> dispatches = new CopyOnWriteArrayList<>();
    private final AtomicLong turn = new AtomicLong();
    private final Set<String> pinned = ConcurrentHashMap.newKeySet();
    private final HttpServer entry;
    private final HttpServer admin;
    /** Envoy's admin interface, in an llm-d router Pod only: on the Pod's loopback, where its drain hook asks. */
    private final Optional<HttpServer> proxyAdmin;

    private final AtomicInteger clientsInFlight = new AtomicInteger();
    private final AtomicBoolean entryStopped = new AtomicBoolean();
    private volatile boolean healthCheckFailed;
    private volatile boolean stopped;
    private volatile boolean up = true;
    /** How many of the next worker additions (smg's POST /workers) are refused. */
    private final AtomicInteger additionsToRefuse = new AtomicInteger();

    private volatile boolean watching = true;
    private volatile boolean everHeld;

    /**
     * @param watch the labels of the Pods the test world's informer follows for the router
     * @param selector the labels the router selects its endpoints by
     */
    public FakeRouter(
            KubernetesClient client,
            String namespace,
            RouterKind kind,
            Map<String, String> watch,
            Map<String, String> selector,
            Timing timing) {
        // Real routers take clients on llm-d's Envoy listener 8081 (llm-d-router v0.10.0
        // config/charts/llm-d-router-standalone/values.yaml), vLLM's router's --port, 8001 by default
        // (production-stack vllm-stack-0.1.12 src/vllm_router/parsers/parser.py), and smg's --port, 30000 by default
        // (smg v1.9.0 model_gateway/src/main.rs); each fake has an address of its own, so any free port serves.
        this(client, namespace, kind, watch, selector, timing, new LoopbackAddresses().next(), 0, 0, Optional.empty());
    }

    private FakeRouter(
            KubernetesClient client,
            String namespace,
            RouterKind kind,
            Map<String, String> watch,
            Map<String, String> selector,
            Timing timing,
            String address,
            int entryPort,
            int adminPort,
            Optional<InetSocketAddress> proxyAdminAt) {
        this.kind = kind;
        this.namespace = namespace;
        this.selector = Map.copyOf(selector);
        this.timing = timing;
        try {
            entry = HttpServer.create(new InetSocketAddress(address, entryPort), 64);
            entry.setExecutor(serving);
            entry.createContext("/v1/", this::serveClient);
            // llm-d's picker answers on its own metrics port while Envoy takes clients; vLLM's router and smg
            // serve both on their one API port (render/RouterAdmin)
            admin = kind == RouterKind.LLM_D_ROUTER
                    ? HttpServer.create(new InetSocketAddress(address, adminPort), 64)
                    : entry;
            admin.setExecutor(serving);
            admin.createContext(RouterAdmin.of(kind).path(), this::serveAdmin);
            proxyAdmin =
                    proxyAdminAt.isEmpty() ? Optional.empty() : Optional.of(HttpServer.create(proxyAdminAt.get(), 16));
            proxyAdmin.ifPresent(server -> {
                server.setExecutor(serving);
                server.createContext(
                        "/",
                        exchange -> serveProxyAdmin(exchange, entry.getAddress().getPort()));
                server.start();
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        entry.start();
        if (admin != entry) {
            admin.start();
        }
        this.pods = client.pods().inNamespace(namespace).withLabels(watch).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                later(pod.getMetadata().getName(), pod);
            }

            @Override
            public void onUpdate(Pod old, Pod pod) {
                later(pod.getMetadata().getName(), pod);
            }

            @Override
            public void onDelete(Pod pod, boolean unknown) {
                later(pod.getMetadata().getName(), null);
            }
        });
        if (kind == RouterKind.SGLANG_GATEWAY) {
            // smg v1.9.0 service_discovery.rs: the first tick waits one interval, so the watcher fills the state first
            long period = timing.reconcileEvery().toMillis();
            discovery.scheduleAtFixedRate(this::reconcile, period, period, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * A router of this kind in front of a deployment as the operator labels it: it learns of every Pod of the
     * deployment and selects the serving leaders, the labels the operator renders as its selector
     * (render/RouterRenderer.selects).
     */
    public static FakeRouter inFrontOf(KubernetesClient client, String namespace, String deployment, RouterKind kind) {
        return inFrontOf(client, namespace, deployment, kind, Timing.asReleased());
    }

    public static FakeRouter inFrontOf(
            KubernetesClient client, String namespace, String deployment, RouterKind kind, Timing timing) {
        return new FakeRouter(
                client, namespace, kind, Map.of(Labels.DEPLOYMENT, deployment), selectorOf(deployment), timing);
    }

    /**
     * The router a router Pod of a real cluster runs, on the Pod's own address and the ports the operator rendered for
     * it, so the operator finds it where it asks a router Pod: clients on {@code entryPort}, the admin answer on the
     * kind's own port (render/RouterAdmin).
     */
    public static FakeRouter inPodOf(
            KubernetesClient client,
            String namespace,
            String deployment,
            RouterKind kind,
            String address,
            int entryPort,
            Optional<InetSocketAddress> proxyAdmin) {
        return new FakeRouter(
                client,
                namespace,
                kind,
                Map.of(Labels.DEPLOYMENT, deployment),
                selectorOf(deployment),
                Timing.asReleased(),
                address,
                entryPort,
                RouterAdmin.of(kind).port(),
                proxyAdmin);
    }

    /** Envoy's admin interface, where an llm-d router Pod has one. */
    public Optional<URI> proxyAdmin() {
        return proxyAdmin.map(
                server -> URI.create("http://" + server.getAddress().getHostString() + ":"
                        + server.getAddress().getPort()));
    }

    /** Client requests the router is serving now: Envoy's downstream_rq_active on the client listener. */
    public int clientsInFlight() {
        return clientsInFlight.get();
    }

    /** Whether Envoy's health check was failed through its admin interface (POST /healthcheck/fail). */
    public boolean healthCheckFailed() {
        return healthCheckFailed;
    }

    /**
     * A graceful stop, as uvicorn's and smg's on SIGTERM: new connections are still taken for {@code keepAccepting},
     * then the listener closes and the requests in progress run on, for {@code bound} at most, after which whatever
     * is still open is cut and the router has stopped. It returns at once.
     */
    public void shutDown(Duration keepAccepting, Duration bound) {
        Thread stopping = new Thread(
                () -> {
                    try {
                        Thread.sleep(keepAccepting.toMillis());
                        if (entryStopped.compareAndSet(false, true)) {
                            // HttpServer.stop closes the listener at once, then waits out its whole delay unless an
                            // exchange ends meanwhile (JDK 17 ServerImpl); so the requests in progress are counted
                            // here, and a second stop closes the connections once none is left
                            Thread listener = new Thread(() ->
                                    entry.stop((int) Math.min(Math.max(1, bound.toSeconds()), MAX_STOP_SECONDS)));
                            listener.setDaemon(true);
                            listener.start();
                            long until = System.nanoTime() + bound.toNanos();
                            while (clientsInFlight.get() > 0 && System.nanoTime() < until) {
                                Thread.sleep(20);
                            }
                            entry.stop(0);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    close();
                },
                "fake-router-shutdown");
        stopping.setDaemon(true);
        stopping.start();
    }

    /** Whether the router has stopped, by {@link #close} or at the end of a {@link #shutDown}. */
    public boolean stopped() {
        return stopped;
    }

    /**
     * Envoy's admin interface as Envoy 1.36.2 answered when it was run here: POST /healthcheck/fail 200 (405 to a
     * GET), /stats?filter=REGEX one {@code name: value} line per matching stat. It knows one stat, the client
     * listener's requests in flight, named after the listener's stat_prefix as the rendered envoy.yaml has it.
     */
    private void serveProxyAdmin(HttpExchange exchange, int clientPort) throws IOException {
        exchange.getRequestBody().readAllBytes();
        String path = exchange.getRequestURI().getPath();
        String method = exchange.getRequestMethod();
        if (path.equals("/healthcheck/fail")) {
            if (!method.equals("POST")) {
                answer(
                        exchange,
                        new FakeRouterPages.Answer(
                                405, FakeRouterPages.TEXT, "Method " + method + " not allowed, POST required.\n"));
                return;
            }
            healthCheckFailed = true;
            answer(exchange, new FakeRouterPages.Answer(200, FakeRouterPages.TEXT, "OK\n"));
        } else if (path.equals("/stats") && method.equals("GET")) {
            String gauge = "http.http-" + clientPort + ".downstream_rq_active";
            String filter = Optional.ofNullable(exchange.getRequestURI().getQuery())
                    .filter(q -> q.startsWith("filter="))
                    .map(q -> q.substring(7))
                    .orElse("");
            boolean matches;
            try {
                matches = Pattern.compile(filter).matcher(gauge).find();
            } catch (PatternSyntaxException e) {
                answer(exchange, new FakeRouterPages.Answer(400, FakeRouterPages.TEXT, "Invalid regex\n"));
                return;
            }
            answer(
                    exchange,
                    new FakeRouterPages.Answer(
                            200, FakeRouterPages.TEXT, matches ? gauge + ": " + clientsInFlight.get() + "\n" : ""));
        } else {
            answer(
                    exchange,
                    new FakeRouterPages.Answer(404, FakeRouterPages.TEXT, "invalid path. admin commands are:\n"));
        }
    }

    private static Map<String, String> selectorOf(String deployment) {
        return Map.of(
                Labels.DEPLOYMENT,
                deployment,
                Labels.SERVING,
                Labels.SERVING_YES,
                Labels.MEMBER_INDEX,
                Labels.LEADER_INDEX);
    }

    public RouterKind kind() {
        return kind;
    }

    /** Where clients send their requests: Envoy's listener for llm-d, the API port for vLLM's router and smg. */
    public URI clientEntry() {
        return URI.create("http://" + entry.getAddress().getHostString() + ":"
                + entry.getAddress().getPort());
    }

    /** Where the operator asks what the router routes to, in this router's own dialect. */
    public URI adminUri() {
        return URI.create("http://" + admin.getAddress().getHostString() + ":"
                + admin.getAddress().getPort() + RouterAdmin.of(kind).path());
    }

    /** Every request goes to the router's client entry; the router picks the engine when it arrives. */
    @Override
    public Optional<RouteTarget> pick() {
        return Optional.of(new RouteTarget(null, clientEntry()));
    }

    /** The Pods the router would send a request to now, by name. Empty while the router is down. */
    public List<String> selected() {
        return routable().stream().map(RoutedEndpoint::pod).toList();
    }

    public boolean selects(String pod) {
        return selected().contains(pod);
    }

    public List<Dispatch> dispatches() {
        return List.copyOf(dispatches);
    }

    public List<Dispatch> dispatchesTo(String pod, Instant since) {
        return dispatches.stream()
                .filter(d -> d.pod().equals(pod) && !d.at().isBefore(since))
                .toList();
    }

    public boolean isUp() {
        return up;
    }

    /** A router that is down answers 503 to clients and to the operator alike. */
    public void setUp(boolean value) {
        up = value;
    }

    /** Refuses the next worker additions with 503, as a gateway Pod restarting or overloaded would. */
    public void refuseWorkerAdditions(int times) {
        additionsToRefuse.set(times);
    }

    /** The router keeps selecting this Pod whatever its discovery says, as a router whose discovery lags would. */
    public void pin(String pod, boolean value) {
        if (value) {
            pinned.add(pod);
        } else {
            pinned.remove(pod);
        }
    }

    /** A dispatch the router reports as made now, whatever the selection says: a late decision in flight. */
    public void reportDispatch(String pod) {
        dispatches.add(new Dispatch(pod, Instant.now()));
    }

    /**
     * vLLM's router loses its watch: every change until {@link #reconnectWatch} is never seen. Its watch loop catches
     * the error and opens a new stream (production-stack vllm-stack-0.1.12 src/vllm_router/service_discovery.py,
     * _watch_engines).
     */
    public void dropWatch() {
        requireVllm();
        onDiscovery(() -> watching = false);
    }

    /**
     * vLLM's router opens a new watch without listing first: the new stream reports each Pod that matches now as
     * ADDED, and an engine deleted or withdrawn while it was away is never removed (production-stack issue #1091,
     * still so at vllm-stack-0.1.12).
     */
    public void reconnectWatch() {
        requireVllm();
        onDiscovery(() -> {
            watching = true;
            for (Pod pod : pods.getStore().list()) {
                String name = pod.getMetadata().getName();
                seen.remove(name);
                apply(name, pod);
            }
        });
    }

    private void requireVllm() {
        if (kind != RouterKind.VLLM_ROUTER) {
            throw new IllegalStateException(
                    "only vLLM's router keeps its engines across a reconnect; " + kind + " lists again");
        }
    }

    private void later(String name, Pod pod) {
        discovery.schedule(() -> apply(name, pod), timing.discoveryLag().toMillis(), TimeUnit.MILLISECONDS);
    }

    private void onDiscovery(Runnable action) {
        try {
            discovery.submit(action).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("discovery did not run", e);
        }
    }

    /** Runs on the discovery thread only. */
    private void apply(String name, Pod after) {
        if (!watching) {
            return;
        }
        Pod before = seen.get(name);
        if (after == null) {
            seen.remove(name);
        } else {
            seen.put(name, after);
        }
        boolean known = kind == RouterKind.SGLANG_GATEWAY ? tracked.containsKey(name) : held.containsKey(name);
        switch (RouterDiscovery.onEvent(kind, selector, before, after, known)) {
            case ROUTE -> add(after);
            case DROP -> remove(name);
            case NONE -> {}
        }
    }

    /** smg's periodic relist; runs on the discovery thread. */
    private void reconcile() {
        List<Pod> listed = pods.getStore().list();
        RouterDiscovery.Reconciled diff = RouterDiscovery.smgReconcile(selector, Map.copyOf(tracked), listed);
        diff.stale().forEach(this::remove);
        listed.stream()
                .filter(p -> diff.missing().contains(p.getMetadata().getName()))
                .forEach(this::add);
    }

    private void add(Pod pod) {
        String name = pod.getMetadata().getName();
        if (kind == RouterKind.SGLANG_GATEWAY) {
            tracked.put(name, pod.getMetadata().getUid());
        }
        URI base = base(pod);
        // smg v1.9.0 model_gateway/src/worker/registry.rs, WorkerId::new: a fresh UUID per worker (v7 there) smg v1.9.0
        // model_gateway/src/worker/registry.rs: one id per url while the worker is there (reserve_id_for_url),
        // forgotten when it is removed
        String workerId = kind != RouterKind.SGLANG_GATEWAY
                ? null
                : Optional.ofNullable(held.get(name))
                        .filter(e -> e.base().equals(base) && !e.draining())
                        .map(RoutedEndpoint::workerId)
                        .orElseGet(() -> UUID.randomUUID().toString());
        held.put(
                name,
                new RoutedEndpoint(
                        name, pod.getMetadata().getUid(), base, workerId, System.currentTimeMillis() / 1000, false));
        ports.put(name, base.getPort());
        everHeld = true;
    }

    private void remove(String name) {
        if (kind == RouterKind.SGLANG_GATEWAY) {
            tracked.remove(name);
            removeWorker(name);
        } else {
            held.remove(name);
        }
    }

    /**
     * smg v1.9.0 RemoveWorker job: a Ready worker turns Draining, unroutable but still listed, for the drain settle,
     * then leaves the registry; one that is not Ready leaves at once (model_gateway/src/workflow/steps/local/
     * drain_workers.rs).
     */
    private void removeWorker(String name) {
        RoutedEndpoint endpoint = held.get(name);
        if (endpoint == null) {
            return;
        }
        if (endpoint.draining() || timing.drainSettle().isZero()) {
            held.remove(name, endpoint);
            return;
        }
        RoutedEndpoint draining = endpoint.drained();
        held.replace(name, endpoint, draining);
        discovery.schedule(
                () -> held.remove(name, draining), timing.drainSettle().toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The endpoints a request may go to now: those held and not draining, and the pinned Pods. */
    private List<RoutedEndpoint> routable() {
        if (!up) {
            return List.of();
        }
        Map<String, RoutedEndpoint> out = new HashMap<>();
        held.values().stream().filter(e -> !e.draining()).forEach(e -> out.put(e.pod(), e));
        for (String name : pinned) {
            if (!out.containsKey(name)) {
                pods.getStore().list().stream()
                        .filter(p -> p.getMetadata().getName().equals(name)
                                && p.getStatus() != null
                                && p.getStatus().getPodIP() != null)
                        .findFirst()
                        .ifPresent(p -> out.put(
                                name, new RoutedEndpoint(name, p.getMetadata().getUid(), base(p), null, 0, false)));
            }
        }
        return out.values().stream()
                .sorted(Comparator.comparing(RoutedEndpoint::pod))
                .toList();
    }

    /**
     * Round robin over the endpoints sorted by name, as vLLM's router does with --routing-logic roundrobin
     * (src/vllm_router/routers/routing_logic.py, RoundRobinRouter, sorted by URL). llm-d's picker scores endpoints
     * by queue, cache and prefix, and smg's cache_aware policy by prefix and load; with one prompt and idle fakes the
     * fake spreads their load the same way.
     */
    private Optional<RoutedEndpoint> choose() {
        List<RoutedEndpoint> candidates = routable();
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        RoutedEndpoint chosen = candidates.get((int) (turn.getAndIncrement() % candidates.size()));
        dispatches.add(new Dispatch(chosen.pod(), Instant.now()));
        return Optional.of(chosen);
    }

    private void serveClient(HttpExchange exchange) throws IOException {
        clientsInFlight.incrementAndGet();
        try {
            serveClientCounted(exchange);
        } finally {
            clientsInFlight.decrementAndGet();
        }
    }

    private void serveClientCounted(HttpExchange exchange) throws IOException {
        byte[] request = exchange.getRequestBody().readAllBytes();
        if (!up) {
            answer(exchange, new FakeRouterPages.Answer(503, FakeRouterPages.TEXT, "router unavailable"));
            return;
        }
        Optional<RoutedEndpoint> chosen = choose();
        if (chosen.isEmpty()) {
            boolean anyHeld = kind == RouterKind.SGLANG_GATEWAY ? !held.isEmpty() : everHeld;
            answer(exchange, FakeRouterPages.noEndpoint(kind, MODEL, anyHeld));
            return;
        }
        forward(exchange, chosen.get(), request);
    }

    /**
     * Sends the request on to the engine and streams its answer back as it arrives. An engine stream that breaks
     * breaks the client's the same way: the connection closes without the closing chunk, as Envoy resets the
     * downstream request of a severed upstream connection (the same page of its docs), aiohttp's iter_any raises into Starlette's StreamingResponse and smg's relay task forwards the
     * stream error (model_gateway/src/routers/http/router.rs).
     */
    private void forward(HttpExchange exchange, RoutedEndpoint endpoint, byte[] request) throws IOException {
        URI target = endpoint.base().resolve(exchange.getRequestURI().getRawPath());
        HttpRequest.Builder call = HttpRequest.newBuilder(target).POST(HttpRequest.BodyPublishers.ofByteArray(request));
        Optional.ofNullable(exchange.getRequestHeaders().getFirst("Content-Type"))
                .ifPresent(type -> call.header("Content-Type", type));
        exchange.getResponseHeaders().set(SERVED_BY, endpoint.pod());
        HttpResponse<InputStream> response;
        try {
            response = upstream.send(call.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            answer(exchange, FakeRouterPages.unreachable(kind, target.toString()));
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer(exchange, FakeRouterPages.unreachable(kind, target.toString()));
            return;
        }
        response.headers()
                .firstValue("Content-Type")
                .ifPresent(type -> exchange.getResponseHeaders().set("Content-Type", type));
        try (InputStream in = response.body()) {
            exchange.sendResponseHeaders(response.statusCode(), 0);
            OutputStream out = exchange.getResponseBody();
            byte[] chunk = new byte[8192];
            for (int n = in.read(chunk); n >= 0; n = in.read(chunk)) {
                out.write(chunk, 0, n);
                out.flush();
            }
            out.close();
        } catch (IOException e) {
            // thrown out of the handler, the server drops the connection where it stands
            throw new UncheckedIOException("stream from " + endpoint.pod() + " broke", e);
        }
    }

    private void serveAdmin(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        if (!up) {
            answer(exchange, new FakeRouterPages.Answer(503, FakeRouterPages.TEXT, "router unavailable"));
            return;
        }
        String path = exchange.getRequestURI().getPath();
        String method = exchange.getRequestMethod();
        if (kind == RouterKind.SGLANG_GATEWAY && "DELETE".equals(method) && path.startsWith("/workers/")) {
            answer(exchange, deleteWorker(path.substring("/workers/".length())));
        } else if (kind == RouterKind.SGLANG_GATEWAY && "POST".equals(method) && path.equals("/workers")) {
            boolean refused = additionsToRefuse.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
            answer(
                    exchange,
                    refused
                            ? new FakeRouterPages.Answer(503, FakeRouterPages.TEXT, "Service Unavailable")
                            : createWorker(body));
        } else if ("GET".equals(method) && path.equals(RouterAdmin.of(kind).path())) {
            answer(exchange, page());
        } else {
            answer(exchange, new FakeRouterPages.Answer(404, FakeRouterPages.TEXT, "Not Found"));
        }
    }

    private FakeRouterPages.Answer page() {
        List<RoutedEndpoint> routable = routable();
        return switch (kind) {
            case LLM_D_ROUTER -> {
                Map<String, Long> attempts =
                        dispatches.stream().collect(Collectors.groupingBy(Dispatch::pod, Collectors.counting()));
                yield FakeRouterPages.llmDMetrics(routable, attempts, ports, "pool", namespace, MODEL);
            }
            case VLLM_ROUTER -> FakeRouterPages.vllmEngines(routable, MODEL);
            case SGLANG_GATEWAY -> {
                // the registry lists its draining workers too; pinned Pods are listed as the workers they stand for
                Map<String, RoutedEndpoint> listed = new HashMap<>();
                routable.forEach(e -> listed.put(e.pod(), e.workerId() == null ? withPinnedId(e) : e));
                held.values().stream().filter(RoutedEndpoint::draining).forEach(e -> listed.putIfAbsent(e.pod(), e));
                yield FakeRouterPages.smgWorkers(listed.values().stream()
                        .sorted(Comparator.comparing(RoutedEndpoint::pod))
                        .toList());
            }
        };
    }

    private static RoutedEndpoint withPinnedId(RoutedEndpoint e) {
        return new RoutedEndpoint(
                e.pod(),
                e.uid(),
                e.base(),
                UUID.nameUUIDFromBytes(e.pod().getBytes(StandardCharsets.UTF_8)).toString(),
                e.addedEpochSeconds(),
                false);
    }

    /** smg v1.9.0 model_gateway/src/worker/service.rs, delete_worker: parse the id, find its worker, queue its removal. */
    private FakeRouterPages.Answer deleteWorker(String raw) {
        try {
            UUID.fromString(raw);
        } catch (IllegalArgumentException e) {
            return FakeRouterPages.smgInvalidWorkerId(raw, e.getMessage());
        }
        Optional<RoutedEndpoint> worker = held.values().stream()
                .filter(e -> raw.equalsIgnoreCase(e.workerId()))
                .findFirst();
        if (worker.isEmpty()) {
            return FakeRouterPages.smgWorkerNotFound(raw);
        }
        discovery.execute(() -> removeWorker(worker.get().pod()));
        return FakeRouterPages.smgDeleteAccepted(worker.get().workerId());
    }

    /**
     * smg v1.9.0 model_gateway/src/worker/service.rs, create_worker: the url must carry its scheme, a url that already
     * is a worker is a conflict, otherwise the addition is queued. The worker comes in Ready here; the release probes
     * it first. Its discovery's tracked set is left as it was, as the API path never touches it.
     */
    private FakeRouterPages.Answer createWorker(byte[] body) {
        String url;
        try {
            JsonNode spec = JSON.readTree(body);
            if (spec == null || !spec.path("url").isTextual()) {
                // axum's Json extractor refuses JSON that is no WorkerSpec with 422 (its wording not checked)
                return new FakeRouterPages.Answer(
                        422, FakeRouterPages.TEXT, "Failed to deserialize the JSON body into the target type");
            }
            url = spec.path("url").asText();
        } catch (IOException e) {
            return new FakeRouterPages.Answer(400, FakeRouterPages.TEXT, "Failed to parse the request body as JSON");
        }
        String scheme = url.contains("://") ? url.substring(0, url.indexOf("://")) : "";
        if (!List.of("http", "https", "grpc", "grpcs").contains(scheme)) {
            return FakeRouterPages.smgBadWorkerUrl(url);
        }
        Optional<RoutedEndpoint> existing = held.values().stream()
                .filter(e -> e.base().toString().equals(url))
                .findFirst();
        if (existing.isPresent()) {
            return FakeRouterPages.smgWorkerExists(url, existing.get().workerId());
        }
        String workerId = UUID.randomUUID().toString();
        URI base = URI.create(url);
        String pod = pods.getStore().list().stream()
                .filter(p -> p.getStatus() != null && p.getStatus().getPodIP() != null && base(p).equals(base))
                .map(p -> p.getMetadata().getName())
                .findFirst()
                .orElse(url);
        discovery.execute(() ->
                held.put(pod, new RoutedEndpoint(pod, null, base, workerId, System.currentTimeMillis() / 1000, false)));
        return FakeRouterPages.smgCreateAccepted(workerId, url);
    }

    private static void answer(HttpExchange exchange, FakeRouterPages.Answer answer) throws IOException {
        byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", answer.contentType());
        exchange.sendResponseHeaders(answer.status(), body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    /**
     * Where the router sends a Pod's requests: its engine's port, or for a direct decoder the routing proxy's, which
     * takes the role's port (the InferencePool's target port) and passes everything on to the engine behind it.
     */
    static URI base(Pod pod) {
        String scheme = Optional.ofNullable(pod.getMetadata().getAnnotations())
                .map(a -> a.get(Annotations.SCRAPE_SCHEME))
                .orElse("http");
        int port = RoutingProxies.port(pod)
                .orElseGet(() ->
                        pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort());
        return URI.create(scheme + "://" + pod.getStatus().getPodIP() + ":" + port);
    }

    @Override
    public void close() {
        pods.close();
        discovery.shutdownNow();
        if (entryStopped.compareAndSet(false, true)) {
            entry.stop(0);
        }
        if (admin != entry) {
            admin.stop(0);
        }
        proxyAdmin.ifPresent(server -> server.stop(0));
        serving.shutdownNow();
        stopped = true;
    }
}
