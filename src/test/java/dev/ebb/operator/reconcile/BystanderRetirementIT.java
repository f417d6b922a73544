package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.Bystander;
import dev.ebb.operator.sim.DeletionWatch;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.KubeProxyService;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Without a router, the traffic every real engine Pod gets besides its clients' (a metrics scraper on a kept
 * connection, the kubelet's probes on new ones) does not hold an idle replica for ever, while a client that keeps its
 * connection and sends a generation on it is held for, and nothing it sends is cut.
 */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class BystanderRetirementIT {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    private static final String LEAVING = "qwen-server-r1-m0";
    private static final String STAYING = "qwen-server-r0-m0";
    private static final Duration CONVERGE = Duration.ofSeconds(60);
    /** What the scale-downs here must take at most, from the reduction to the leaving Pod gone. */
    private static final Duration IDLE_SCALE_DOWN = Duration.ofSeconds(30);

    @Inject
    KubernetesClient client;

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    /** The namespace of a test's one deployment; a test of several makes more with {@link #deployed()}. */
    private String ns;

    @BeforeEach
    void start() {
        ns = deployed();
    }

    /** A namespace of its own with an unrouted deployment of two replicas, both ready behind the role's Service. */
    private String deployed() {
        String namespace = world.namespace("bystanders");
        client.resource(deployment("qwen", "vLLM")
                        .namespace(namespace)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        String service = Names.roleService("qwen", "server");
        await().atMost(CONVERGE)
                .until(() -> world.endpoints().slicesOf(namespace, service).stream()
                                .flatMap(slice ->
                                        slice.getEndpoints() == null ? Stream.empty() : slice.getEndpoints().stream())
                                .filter(e ->
                                        Boolean.TRUE.equals(e.getConditions().getReady()))
                                .count()
                        == 2);
        return namespace;
    }

    private FakeEngine engine(String namespace, String pod) {
        return world.kubelet().engine(namespace, pod).orElseThrow();
    }

    private FakeEngine engine(String pod) {
        return engine(ns, pod);
    }

    /** Scrapers look at every Pod, each from an address of its own, as one Prometheus per node would. */
    private void scrapeEveryPod(String namespace, Duration every) {
        String prometheus = ADDRESSES.next();
        for (String pod : List.of(STAYING, LEAVING)) {
            FakeEngine engine = engine(namespace, pod);
            world.closing(Bystander.scraper(pod, engine.host(), engine.port(), prometheus, every));
        }
    }

    /** The kubelet probes its Pods from the node's address. */
    private void probeEveryPod(String namespace, Duration every) {
        String node = ADDRESSES.next();
        for (String pod : List.of(STAYING, LEAVING)) {
            FakeEngine engine = engine(namespace, pod);
            world.closing(Bystander.prober(pod, engine.host(), engine.port(), node, every));
        }
    }

    private Pod pod(String namespace, String name) {
        return client.pods().inNamespace(namespace).withName(name).get();
    }

    private Pod pod(String name) {
        return pod(ns, name);
    }

    private Optional<RetirementStatus> retirement() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(ns)
                .withName("qwen")
                .get();
        return Optional.ofNullable(md)
                .map(ModelDeployment::getStatus)
                .flatMap(s -> s.retirements() == null
                        ? Optional.empty()
                        : s.retirements().stream().findFirst());
    }

    private List<Event> events(String namespace, String reason) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    private List<Event> events(String reason) {
        return events(ns, reason);
    }

    /** One kind of bystander traffic, and whether it keeps a connection open across every read. */
    private record Traffic(String what, BiConsumer<BystanderRetirementIT, String> start, boolean keptAcrossEveryRead) {}

    private static final List<Traffic> TRAFFIC = List.of(
            new Traffic(
                    "a scraper every 2 s on a kept connection",
                    (it, namespace) -> it.scrapeEveryPod(namespace, Duration.ofSeconds(2)),
                    true),
            new Traffic(
                    "a scraper every 5 s on a kept connection",
                    (it, namespace) -> it.scrapeEveryPod(namespace, Duration.ofSeconds(5)),
                    true),
            new Traffic(
                    "the kubelet's probes every second from the node's address",
                    (it, namespace) -> it.probeEveryPod(namespace, Duration.ofSeconds(1)),
                    false),
            new Traffic(
                    "both at once",
                    (it, namespace) -> {
                        it.scrapeEveryPod(namespace, Duration.ofSeconds(2));
                        it.probeEveryPod(namespace, Duration.ofSeconds(1));
                    },
                    true));

    /**
     * Each kind of bystander traffic on a deployment of its own, all scaled down at once. Probes alone sometimes leave
     * two reads in a row with no peer at all, which proves the replica idle as before; a connection kept across every
     * read is taken for a bystander's, and the deletion says so.
     */
    @Test
    void anIdleReplicaWithOnlyBystandersConnectedLeavesWithin30Seconds() {
        List<String> deployments = new ArrayList<>(List.of(ns));
        while (deployments.size() < TRAFFIC.size()) {
            deployments.add(deployed());
        }
        for (int i = 0; i < TRAFFIC.size(); i++) {
            TRAFFIC.get(i).start().accept(this, deployments.get(i));
        }

        Instant asked = Instant.now();
        deployments.forEach(namespace -> Specs.scale(client, namespace, "qwen", "server", 1));
        Map<String, Duration> took = new ConcurrentHashMap<>();
        await().atMost(CONVERGE).pollInterval(Duration.ofMillis(100)).until(() -> {
            deployments.stream()
                    .filter(namespace -> !took.containsKey(namespace) && pod(namespace, LEAVING) == null)
                    .forEach(namespace -> took.put(namespace, Duration.between(asked, Instant.now())));
            return took.size() == deployments.size();
        });

        for (int i = 0; i < TRAFFIC.size(); i++) {
            Traffic traffic = TRAFFIC.get(i);
            String namespace = deployments.get(i);
            System.out.printf(
                    Locale.ROOT,
                    "idle scale-down without a router, %s: reduction to the Pod gone %.1f s%n",
                    traffic.what(),
                    took.get(namespace).toMillis() / 1000.0);
            assertThat(took.get(namespace)).as(traffic.what()).isLessThanOrEqualTo(IDLE_SCALE_DOWN);
            assertThat(pod(namespace, STAYING)).isNotNull();
            await().atMost(CONVERGE)
                    .untilAsserted(() -> assertThat(events(namespace, "ProvenIdle"))
                            .singleElement()
                            .satisfies(e -> {
                                if (traffic.keptAcrossEveryRead()) {
                                    assertThat(e.getMessage())
                                            .as(traffic.what())
                                            .contains("taken for bystanders: no request reached it in");
                                }
                            }));
        }
    }

    /**
     * A client whose kept connection carries only requests that are no generation (a model list every 2 s) looks like a
     * bystander until it sends one: the generation it sends 10 s after the withdrawal holds the replica, streams to its
     * end, and the replica goes only after it, with the client still connected.
     */
    @ParameterizedTest(name = "with a scraper beside it: {0}")
    @ValueSource(booleans = {false, true})
    void aClientThatSendsAGenerationOnItsKeptConnectionAfterTheWithdrawalIsHeldForUntilItEnds(boolean scraped)
            throws Exception {
        if (scraped) {
            scrapeEveryPod(ns, Duration.ofSeconds(2));
        }
        KubeProxyService service = world.closing(new KubeProxyService(
                world.endpoints(), ns, Names.roleService("qwen", "server"), Duration.ofSeconds(1), ADDRESSES.next()));
        await().atMost(CONVERGE).until(() -> service.reachable().size() == 2);
        KubeProxyService.Connection kept = world.closing(service.connectTo(LEAVING));
        ScheduledExecutorService polls = Executors.newSingleThreadScheduledExecutor();
        world.closing(polls::shutdownNow);
        polls.scheduleAtFixedRate(() -> listModels(kept), 0, 2, TimeUnit.SECONDS);
        CompletableFuture<Instant> deleted = DeletionWatch.of(client, ns, LEAVING);

        Specs.scale(client, ns, "qwen", "server", 1);
        await().atMost(CONVERGE).until(() -> !events("Withdrawn").isEmpty());
        Instant withdrawn = Instant.now();
        await().atMost(CONVERGE).until(() -> Instant.now().isAfter(withdrawn.plusSeconds(10)));
        LoadGenerator.Request generation = kept.stream(40, Duration.ofMillis(100));
        Instant ended = Instant.now();

        assertThat(generation.outcome()).as(generation.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(generation.pod()).isEqualTo(LEAVING);
        assertThat(deleted).as("no deletion while the generation streamed").isNotDone();
        Instant at = deleted.orTimeout(CONVERGE.toSeconds(), TimeUnit.SECONDS).join();
        assertThat(at).isAfter(ended);
        System.out.printf(
                Locale.ROOT,
                "a client's generation 10 s after the withdrawal%s: its end to the deletion %.1f s%n",
                scraped ? ", a scraper beside it" : "",
                Duration.between(ended, at).toMillis() / 1000.0);
        await().atMost(CONVERGE)
                .until(() -> pod(LEAVING) == null && retirement().isEmpty());
        assertThat(events("OpenConnections")).isNotEmpty();
    }

    /**
     * The worst case of taking peers for bystanders: the connection was a client's after all, and it sends a generation
     * once the replica is deleted. While the drain hook holds the engine the generation streams to its end; once the
     * engine has its SIGTERM it is refused before anything streams. Neither cuts it.
     */
    @Test
    void aGenerationOnADiscountedConnectionAfterTheDeletionIsHeldByTheHookOrRefusedNeverCut() throws Exception {
        String clientAddress = ADDRESSES.next();
        FakeEngine leaving = engine(LEAVING);
        KubeProxyService.Connection duringHook =
                world.closing(KubeProxyService.Connection.open(LEAVING, leaving.host(), leaving.port(), clientAddress));
        KubeProxyService.Connection afterSigterm =
                world.closing(KubeProxyService.Connection.open(LEAVING, leaving.host(), leaving.port(), clientAddress));
        ScheduledExecutorService polls = Executors.newSingleThreadScheduledExecutor();
        world.closing(polls::shutdownNow);
        polls.scheduleAtFixedRate(
                () -> {
                    listModels(duringHook);
                    listModels(afterSigterm);
                },
                0,
                2,
                TimeUnit.SECONDS);

        Specs.scale(client, ns, "qwen", "server", 1);
        DeletionWatch.of(client, ns, LEAVING)
                .orTimeout(CONVERGE.toSeconds(), TimeUnit.SECONDS)
                .join();
        LoadGenerator.Request held = duringHook.stream(20, Duration.ofMillis(100));
        await().atMost(CONVERGE).until(() -> leaving.state() != FakeEngine.State.SERVING);
        LoadGenerator.Request late = afterSigterm.stream(20, Duration.ofMillis(100));

        assertThat(held.outcome()).as(held.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(late.outcome()).as(late.why()).isEqualTo(LoadGenerator.Outcome.REJECTED);
        await().atMost(CONVERGE).until(() -> pod(LEAVING) == null);
    }

    /** A request that is no generation; a failure means the connection is gone, which the test's own asserts show. */
    private static void listModels(KubeProxyService.Connection connection) {
        try {
            connection.get("/v1/models", true);
        } catch (IOException e) {
            // the engine closed it: what the caller then sends on it is refused, and recorded as such
        }
    }
}
