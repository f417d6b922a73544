package dev.ebb.operator.soak;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.KubeProxyService;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimEndpoints;
import dev.ebb.operator.sim.SimRouterAddress;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One ModelDeployment of the soak with its clients: behind its fake router (which a router restart replaces), or,
 * without a router, reached through its role's Service as kube-proxy carries it. Each client streams one generation
 * after another, of lengths its own seeded random draws.
 */
final class SoakDeployment implements AutoCloseable {
    static final String ROLE = "server";
    /** The engines' pace: a generation of n tokens lasts n tenths of a second. */
    static final Duration TOKEN_INTERVAL = Duration.ofMillis(100);

    private static final int SHORTEST_TOKENS = 10;
    private static final int LONGEST_TOKENS = 900;

    final String name;
    final String engine;
    final RouterKind router;
    final int size;
    final int initialReplicas;
    private final int clients;
    private final AtomicReference<FakeRouter> fakeRouter = new AtomicReference<>();
    private volatile KubeProxyService service;
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final ExecutorService clientThreads;
    private final ThreadLocal<Integer> nextLength = new ThreadLocal<>();
    private volatile boolean sending;

    SoakDeployment(String name, String engine, RouterKind router, int size, int initialReplicas, int clients) {
        this.name = name;
        this.engine = engine;
        this.router = router;
        this.size = size;
        this.initialReplicas = initialReplicas;
        this.clients = clients;
        this.clientThreads = Executors.newFixedThreadPool(clients, DaemonThreads.named("soak-client-" + name));
    }

    /** The router (when there is one) and the ModelDeployment itself. */
    void deploy(KubernetesClient client, String namespace, SimRouterAddress routers) {
        Specs.Deployment spec = Specs.deployment(name, engine)
                .namespace(namespace)
                .role(Specs.role(ROLE).replicas(initialReplicas).size(size == 1 ? null : size));
        if (router != null) {
            FakeRouter fake = FakeRouter.inFrontOf(client, namespace, name, router);
            fakeRouter.set(fake);
            routers.put(namespace, name, router, fake);
            spec.router(router.wireName());
        }
        client.resource(spec.build()).create();
    }

    /** The router's Pod restarts: its streams end, and a new process discovers the Pods afresh. */
    void restartRouter(KubernetesClient client, String namespace, SimRouterAddress routers) {
        FakeRouter fresh = FakeRouter.inFrontOf(client, namespace, name, router);
        FakeRouter old = fakeRouter.getAndSet(fresh);
        routers.put(namespace, name, router, fresh);
        old.close();
    }

    /** Starts the clients, each with its own random drawn from the soak's. */
    void startLoad(SimEndpoints endpoints, String namespace, Random seeds) {
        sending = true;
        if (router == null) {
            service = new KubeProxyService(
                    endpoints,
                    namespace,
                    Names.roleService(name, ROLE),
                    Duration.ofSeconds(1),
                    new LoopbackAddresses().next());
        }
        LoadGenerator routed =
                new LoadGenerator(() -> fakeRouter.get().pick(), 1, () -> nextLength.get(), TOKEN_INTERVAL);
        for (int i = 0; i < clients; i++) {
            Random random = new Random(seeds.nextLong());
            clientThreads.submit(router != null ? () -> throughRouter(routed, random) : () -> throughService(random));
        }
    }

    private void throughRouter(LoadGenerator load, Random random) {
        while (sending) {
            int tokens = tokens(random);
            nextLength.set(tokens);
            LoadGenerator.Request r = load.send();
            sent.add(new Sent(name, true, r, TOKEN_INTERVAL.multipliedBy(tokens)));
            pause(r.outcome() == LoadGenerator.Outcome.REJECTED ? 500 : random.nextInt(1000));
        }
    }

    /**
     * A client with a keep-alive connection through the Service: it thinks for up to 8 s between requests (after 5 s
     * idle the engine has closed the connection, and the next request opens a new one, which kube-proxy sends to an
     * endpoint it knows), and opens a new connection after anything but a completed stream.
     */
    private void throughService(Random random) {
        KubeProxyService.Connection connection = null;
        long lastUsed = 0;
        while (sending) {
            try {
                if (connection != null
                        && System.nanoTime() - lastUsed > Duration.ofSeconds(4).toNanos()) {
                    // a client's pool drops a connection idle for longer than the server keeps it, rather than sending
                    // on it
                    connection.close();
                    connection = null;
                }
                if (connection == null) {
                    Optional<KubeProxyService.Connection> opened = service.connect();
                    if (opened.isEmpty()) {
                        sent.add(new Sent(name, false, rejected(null, "no endpoint"), Duration.ZERO));
                        pause(500);
                        continue;
                    }
                    connection = opened.get();
                }
                int tokens = tokens(random);
                LoadGenerator.Request r = connection.stream(tokens, TOKEN_INTERVAL);
                lastUsed = System.nanoTime();
                sent.add(new Sent(name, false, r, TOKEN_INTERVAL.multipliedBy(tokens)));
                if (r.outcome() != LoadGenerator.Outcome.COMPLETED) {
                    connection.close();
                    connection = null;
                    pause(500);
                } else {
                    pause(random.nextInt(8000));
                }
            } catch (IOException e) {
                sent.add(new Sent(
                        name,
                        false,
                        rejected(connection == null ? null : connection.pod(), "connection failed: " + e.getMessage()),
                        Duration.ZERO));
                connection = null;
                pause(500);
            }
        }
        if (connection != null) {
            try {
                connection.close();
            } catch (IOException ignored) {
                // the client is done with it either way
            }
        }
    }

    private static LoadGenerator.Request rejected(String pod, String why) {
        java.time.Instant now = java.time.Instant.now();
        return new LoadGenerator.Request(0, pod, now, now, LoadGenerator.Outcome.REJECTED, why);
    }

    /** Mostly short chats, some long generations: a third run from 20 to 90 s. */
    private static int tokens(Random random) {
        return random.nextInt(3) == 0 ? random.nextInt(200, LONGEST_TOKENS + 1) : random.nextInt(SHORTEST_TOKENS, 200);
    }

    List<Sent> sent() {
        return List.copyOf(sent);
    }

    /** The clients send nothing new; the streams in flight go on. */
    void stopSending() {
        sending = false;
        clientThreads.shutdown();
    }

    /** Waits until {@code deadline} at most for the streams in flight to end. */
    void awaitLastStreams(java.time.Instant deadline) throws InterruptedException {
        clientThreads.awaitTermination(
                Math.max(0, Duration.between(java.time.Instant.now(), deadline).toMillis()), TimeUnit.MILLISECONDS);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        sending = false;
        clientThreads.shutdownNow();
        Optional.ofNullable(fakeRouter.get()).ifPresent(FakeRouter::close);
        Optional.ofNullable(service).ifPresent(KubeProxyService::close);
    }
}
