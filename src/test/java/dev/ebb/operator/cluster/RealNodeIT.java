package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.drain.HookEnding;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.Fabric8PodExec;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.read.MemberWork;
import dev.ebb.operator.read.PrometheusText;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.retire.ReplicaClassifier;
import dev.ebb.operator.sim.EngineProgram;
import dev.ebb.operator.sim.KubeProxyService;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.ProcessContainer;
import dev.ebb.operator.sim.RouteTarget;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.readiness.Readiness;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The operator's Pods on a real node: the release's kubelet runs the rendered preStop hook with the image's own
 * python3 inside the engine's container, counts its time against the grace, sends SIGTERM and SIGKILL, and streams the
 * member reads' execs; kube-proxy carries clients to a role through its ClusterIP, and conntrack keeps their
 * connections to a Pod after its endpoint is gone. The engine in each container is the test world's fake engine, run
 * as a program of its own.
 */
class RealNodeIT {
    private static final String NS = "real-node";
    /** How long the twelve clients of the scale-down send before they stop. */
    private static final Duration LOAD = Duration.ofSeconds(60);

    private static ClusterWorld world;
    private static KubernetesClient admin;
    private static Watch podWatch;
    /** Each engine container's last terminated state the API server showed, by Pod: the kubelet writes it before the Pod goes. */
    private static final Map<String, ContainerStateTerminated> ENDED = new ConcurrentHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        world = ClusterWorld.onRealNode(NS);
        admin = world.admin;
        podWatch = admin.pods().inNamespace(NS).watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                Optional.ofNullable(pod.getStatus()).map(s -> s.getContainerStatuses()).orElse(List.of()).stream()
                        .filter(c -> c.getName().equals(EnginePod.CONTAINER))
                        .map(ContainerStatus::getState)
                        .filter(s -> s != null && s.getTerminated() != null)
                        .forEach(s -> ENDED.put(pod.getMetadata().getName(), s.getTerminated()));
            }

            @Override
            public void onClose(WatcherException cause) {}
        });
    }

    @AfterAll
    static void stop() {
        if (podWatch != null) {
            podWatch.close();
        }
        if (world != null) {
            world.close();
        }
    }

    /**
     * Clients reach the role only through its Service's ClusterIP, as kube-proxy's rules send them, each request on a
     * kept-alive connection of the clients' pool, which conntrack holds to the Pod it first reached. A scale-down from
     * three to one under that load cuts nothing, and each retired engine exits by itself before the kubelet would
     * kill it. When it ends depends on the pool: while the pool keeps using a connection to a withdrawn Pod, that
     * replica is held busy (seen for minutes on this node); once the clients stop, or the pool lets the connection
     * idle and the engine closes it after 5 s, the replica is proven idle and leaves.
     */
    @Test
    void aScaleDownUnderLoadThroughTheClusterIpCutsNothing() throws Exception {
        admin.resource(deployment("shrink", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(3))
                        .scaling("server", 3)
                        .build())
                .create();
        await("three ready")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(readyPods("shrink"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(3));
        URI clusterIp = clusterIp("shrink");
        Random lengths = new Random(7);
        Set<String> reasons = ConcurrentHashMap.newKeySet();
        try (LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(null, clusterIp)),
                12,
                () -> 20 + lengths.nextInt(40),
                Duration.ofMillis(100))) {
            load.start(LOAD);
            Instant loadEnds = Instant.now().plus(LOAD);
            await("the clients streaming")
                    .atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(world.podsOf("shrink").stream()
                                    .mapToDouble(RealNodeIT::inFlight)
                                    .sum())
                            .as("the load so far: %s", load.requests())
                            .isGreaterThanOrEqualTo(8));

            Instant scaled = Instant.now();
            assertThat(world.kubectl("scale", "md/shrink", "--replicas=1", "-n", NS))
                    .contains("scaled");
            await("one replica left, the retirements done")
                    .atMost(LOAD.plus(Duration.ofSeconds(60)))
                    .untilAsserted(() -> {
                        world.retirements("shrink")
                                .forEach(r -> Optional.ofNullable(r.reason()).ifPresent(reasons::add));
                        assertThat(world.podsOf("shrink"))
                                .as(ClusterState.describe(admin, NS))
                                .hasSize(1);
                        assertThat(world.retirements("shrink")).isEmpty();
                    });
            Instant done = Instant.now();
            System.out.printf(
                    "the scale-down from 3 to 1 under twelve clients through the ClusterIP took %.1f s, ending %.1f s %s the"
                            + " clients stopped; the reasons its status gave: %s%n",
                    Duration.between(scaled, done).toMillis() / 1000.0,
                    Math.abs(Duration.between(loadEnds, done).toMillis()) / 1000.0,
                    done.isBefore(loadEnds) ? "before" : "after",
                    reasons);
            load.stop(Duration.ofSeconds(30));
            assertThat(load.requests())
                    .filteredOn(r -> r.outcome() != LoadGenerator.Outcome.COMPLETED)
                    .as("requests that did not complete")
                    .isEmpty();
            assertThat(load.count(LoadGenerator.Outcome.COMPLETED)).isGreaterThan(20);
        }
        assertThat(endedOf("shrink"))
                .as("the retired engines' last states")
                .hasSize(2)
                .allSatisfy((pod, ended) -> assertThat(ended.getExitCode())
                        .as("%s's exit status (%s)", pod, ended.getReason())
                        .isNotEqualTo(ProcessContainer.KILLED));
    }

    /**
     * One client keeps one connection through the ClusterIP and sends a generation on it now and then. Once its
     * replica is withdrawn, conntrack still takes that connection to it: the member's connection table shows the
     * client, the retirement holds, and each later generation on the connection reaches the withdrawn engine and
     * completes. The replica leaves only after the client stops and the engine has closed the idle connection.
     */
    @Test
    void aKeptConnectionThroughTheClusterIpHoldsItsWithdrawnReplicaUntilTheClientStops() throws Exception {
        admin.resource(deployment("kept", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .scaling("server", 2)
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(readyPods("kept"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        URI clusterIp = clusterIp("kept");
        AtomicReference<Pod> busy = new AtomicReference<>();
        try (LoadGenerator client = new LoadGenerator(
                        () -> Optional.of(new RouteTarget(null, clusterIp)), 1, 30, Duration.ofMillis(100));
                LoadGenerator other = new LoadGenerator(
                        () -> Optional.ofNullable(busy.get())
                                .flatMap(pod -> ClusterWorld.straightTo(pod).pick()),
                        1,
                        300,
                        Duration.ofMillis(100))) {
            CompletableFuture<LoadGenerator.Request> first = CompletableFuture.supplyAsync(client::send);
            AtomicReference<Pod> reached = new AtomicReference<>();
            await("the client's first generation on its replica")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> world.podsOf("kept").stream()
                            .filter(pod -> inFlight(pod) > 0)
                            .findFirst()
                            .map(pod -> {
                                reached.set(pod);
                                return true;
                            })
                            .orElse(false));
            assertThat(first.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
            // a long generation on the other replica, so that the client's, idle, is the one the scale-down takes
            busy.set(world.podsOf("kept").stream()
                    .filter(pod -> !pod.getMetadata()
                            .getName()
                            .equals(reached.get().getMetadata().getName()))
                    .findFirst()
                    .orElseThrow());
            CompletableFuture<LoadGenerator.Request> longOne = CompletableFuture.supplyAsync(other::send);
            await("the other replica streaming").atMost(Duration.ofSeconds(10)).until(() -> inFlight(busy.get()) > 0);

            assertThat(world.kubectl("scale", "md/kept", "--replicas=1", "-n", NS))
                    .contains("scaled");
            await("the client's replica held by its connection")
                    .atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(world.retirements("kept"))
                            .as(ClusterState.describe(admin, NS))
                            .singleElement()
                            .satisfies(r -> {
                                assertThat(r.answering())
                                        .containsExactly(
                                                reached.get().getMetadata().getName());
                                assertThat(r.reason()).isEqualTo("OpenConnections");
                            }));
            // within the engine's 5 s keep-alive, three more generations on the same connection: conntrack takes each
            // to the withdrawn replica, which serves it
            List<LoadGenerator.Request> later = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                CompletableFuture<LoadGenerator.Request> next = CompletableFuture.supplyAsync(client::send);
                await("a later generation on the withdrawn replica")
                        .atMost(Duration.ofSeconds(5))
                        .until(() -> inFlight(reached.get()) > 0);
                later.add(next.get(20, TimeUnit.SECONDS));
                assertThat(admin.pods()
                                .inNamespace(NS)
                                .withName(reached.get().getMetadata().getName())
                                .get()
                                .getMetadata()
                                .getDeletionTimestamp())
                        .as("the client's replica, while its connection brings work")
                        .isNull();
                // the client's pause between generations, inside the engine's 5 s keep-alive
                Thread.sleep(2_000);
            }
            Instant lastEnded = later.get(later.size() - 1).end();
            await("the client's replica gone once its connection is closed")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> admin.pods()
                                    .inNamespace(NS)
                                    .withName(reached.get().getMetadata().getName())
                                    .get()
                            == null);
            System.out.printf(
                    "the kept connection's replica left %.1f s after the client's last generation ended%n",
                    Duration.between(lastEnded, Instant.now()).toMillis() / 1000.0);
            assertThat(later).extracting(LoadGenerator.Request::outcome).containsOnly(LoadGenerator.Outcome.COMPLETED);
            assertThat(longOne.get(60, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }
        // the operator ends the record on its next pass after the Pod is gone (seen still Settling just after)
        await("the retirement ended")
                .atMost(Duration.ofSeconds(30))
                .until(() -> world.retirements("kept").isEmpty());
        assertThat(endedOf("kept"))
                .as("the retired engine's last state")
                .hasSize(1)
                .allSatisfy((pod, ended) -> assertThat(ended.getExitCode())
                        .as("%s's exit status (%s)", pod, ended.getReason())
                        .isNotEqualTo(ProcessContainer.KILLED));
    }

    /**
     * Every real Pod gets traffic that is no client's: here a Prometheus (Debian's package) scrapes each engine at its
     * Pod's address every 2 s over a kept-alive connection, and the kubelet probes each on a connection of its own. With
     * no client, a scale-down from two to one still ends within 30 s, and the deletion names the scraper's connection as
     * a bystander's.
     */
    @Test
    void anIdleReplicaScrapedByPrometheusAndProbedByTheKubeletLeavesWithin30Seconds() throws Exception {
        admin.resource(deployment("scraped", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .scaling("server", 2)
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(readyPods("scraped"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        List<String> targets = world.podsOf("scraped").stream()
                .map(pod -> pod.getStatus().getPodIP() + ":"
                        + pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort())
                .toList();
        try (RealPrometheus prometheus =
                RealPrometheus.scraping(targets, Duration.ofSeconds(2), Path.of("target", "real-node-prometheus"))) {
            await("both engines scraped").atMost(Duration.ofSeconds(60)).until(() -> prometheus.up() == 2);

            Instant scaled = Instant.now();
            assertThat(world.kubectl("scale", "md/scraped", "--replicas=1", "-n", NS))
                    .contains("scaled");
            await("one replica left")
                    .atMost(Duration.ofSeconds(90))
                    .until(() -> world.podsOf("scraped").size() == 1
                            && world.retirements("scraped").isEmpty());
            Duration took = Duration.between(scaled, Instant.now());

            System.out.printf(
                    "an idle scale-down from 2 to 1 scraped by Prometheus every 2 s and probed by the kubelet took %.1f s%n",
                    took.toMillis() / 1000.0);
            assertThat(took).isLessThanOrEqualTo(Duration.ofSeconds(30));
            assertThat(admin.v1().events().inNamespace(NS).list().getItems())
                    .as("events")
                    .filteredOn(event -> "ProvenIdle".equals(event.getReason())
                            && "scraped".equals(event.getInvolvedObject().getName()))
                    .singleElement()
                    .satisfies(event -> assertThat(event.getMessage()).contains("taken for bystanders"));
        }
    }

    /**
     * A client reaches a replica through the ClusterIP and keeps its connection alive with requests that are no
     * generation (a model list every 2 s), while Prometheus scrapes both Pods: the replica looks like one held by
     * bystanders until, 10 s after its withdrawal, the client sends a generation on that connection. conntrack takes it
     * to the withdrawn replica, which streams it to its end; the replica leaves only after it, the client still
     * connected.
     */
    @Test
    void aGenerationOnAKeptConnectionTenSecondsAfterTheWithdrawalIsHeldForBesideAScraper() throws Exception {
        admin.resource(deployment("polled", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .scaling("server", 2)
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(readyPods("polled"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        URI clusterIp = clusterIp("polled");
        List<String> targets = world.podsOf("polled").stream()
                .map(pod -> pod.getStatus().getPodIP() + ":"
                        + pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort())
                .toList();
        AtomicReference<Pod> busy = new AtomicReference<>();
        ScheduledExecutorService polls = Executors.newSingleThreadScheduledExecutor();
        try (RealPrometheus prometheus = RealPrometheus.scraping(
                        targets, Duration.ofSeconds(2), Path.of("target", "real-node-prometheus-polled"));
                KubeProxyService.Connection kept = KubeProxyService.Connection.open(
                        "through the ClusterIP", clusterIp.getHost(), clusterIp.getPort(), "0.0.0.0");
                LoadGenerator other = new LoadGenerator(
                        () -> Optional.ofNullable(busy.get())
                                .flatMap(pod -> ClusterWorld.straightTo(pod).pick()),
                        1,
                        400,
                        Duration.ofMillis(100))) {
            await("both engines scraped").atMost(Duration.ofSeconds(60)).until(() -> prometheus.up() == 2);
            // 20 s, so that a poll of both engines sees it in flight however loaded the machine: a 2 s one was seen
            // ending unseen while another build ran beside the tier, and an 8 s one not seen within 8 s on a quiet one
            CompletableFuture<LoadGenerator.Request> first =
                    CompletableFuture.supplyAsync(() -> kept.stream(200, Duration.ofMillis(100)));
            AtomicReference<Pod> reached = new AtomicReference<>();
            await("the client's first generation on its replica, or its end")
                    .atMost(Duration.ofSeconds(25))
                    .until(() -> first.isDone()
                            || world.podsOf("polled").stream()
                                    .filter(pod -> inFlight(pod) > 0)
                                    .findFirst()
                                    .map(pod -> {
                                        reached.set(pod);
                                        return true;
                                    })
                                    .orElse(false));
            assertThat(reached.get())
                    .as("the generation seen in flight on a replica before it ended (%s)", first.getNow(null))
                    .isNotNull();
            assertThat(first.get(40, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
            String leaving = reached.get().getMetadata().getName();
            polls.scheduleAtFixedRate(
                    () -> {
                        try {
                            kept.get("/v1/models", true);
                        } catch (IOException e) {
                            // the generation below then fails on it, and says so
                        }
                    },
                    0,
                    2,
                    TimeUnit.SECONDS);
            // a long generation on the other replica, so that the client's, idle, is the one the scale-down takes
            busy.set(world.podsOf("polled").stream()
                    .filter(pod -> !pod.getMetadata().getName().equals(leaving))
                    .findFirst()
                    .orElseThrow());
            CompletableFuture<LoadGenerator.Request> longOne = CompletableFuture.supplyAsync(other::send);
            await("the other replica streaming").atMost(Duration.ofSeconds(10)).until(() -> inFlight(busy.get()) > 0);

            assertThat(world.kubectl("scale", "md/polled", "--replicas=1", "-n", NS))
                    .contains("scaled");
            await("the client's replica withdrawn")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> world.retirements("polled").stream()
                            .anyMatch(r -> r.answering().contains(leaving) && "Draining".equals(r.state())));
            Instant withdrawn = Instant.now();
            await("ten seconds on")
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> Instant.now().isAfter(withdrawn.plusSeconds(10)));
            assertThat(admin.pods()
                            .inNamespace(NS)
                            .withName(leaving)
                            .get()
                            .getMetadata()
                            .getDeletionTimestamp())
                    .as("the client's replica, before its generation")
                    .isNull();
            CompletableFuture<LoadGenerator.Request> generation =
                    CompletableFuture.supplyAsync(() -> kept.stream(40, Duration.ofMillis(100)));
            await("the generation on the withdrawn replica")
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> inFlight(reached.get()) > 0);
            LoadGenerator.Request ended = generation.get(30, TimeUnit.SECONDS);
            assertThat(ended.outcome()).as(ended.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
            await("the client's replica gone after its generation")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> admin.pods().inNamespace(NS).withName(leaving).get() == null);
            System.out.printf(
                    "a generation 10 s after the withdrawal on a kept connection through the ClusterIP, Prometheus beside it: "
                            + "the replica left %.1f s after it ended%n",
                    Duration.between(ended.end(), Instant.now()).toMillis() / 1000.0);
            assertThat(longOne.get(60, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        } finally {
            polls.shutdownNow();
        }
        assertThat(endedOf("polled"))
                .as("the retired engine's last state")
                .hasSize(1)
                .allSatisfy((pod, ended) -> assertThat(ended.getExitCode())
                        .as("%s's exit status (%s)", pod, ended.getReason())
                        .isNotEqualTo(ProcessContainer.KILLED));
    }

    /** The last terminated states of one deployment's engines. */
    private static Map<String, ContainerStateTerminated> endedOf(String deployment) {
        return ENDED.entrySet().stream()
                .filter(e -> e.getKey().startsWith(deployment + "-"))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    /**
     * {@code kubectl delete pod} while a generation streams: the kubelet runs the rendered preStop hook inside the
     * engine's container with the image's python3, the hook holds until the engine has read idle, and only then does
     * the kubelet send SIGTERM (the engine writes when it came into its termination message); the generation
     * completes, and the engine exits by itself within the grace. Both engines' images: vLLM's {@code vllm serve} and
     * SGLang's {@code python3 -m sglang.launch_server}.
     */
    @ParameterizedTest(name = "{0}, its hook''s ConfigMap deleted first: {1}")
    @CsvSource({"vLLM, false", "SGLang, false", "vLLM, true"})
    void aPodDeletedWhileItStreamsIsHeldByItsHookUntilTheGenerationEnds(String engine, boolean scriptDeleted)
            throws Exception {
        String name = "deleted-" + engine.toLowerCase(Locale.ROOT) + (scriptDeleted ? "-unscripted" : "");
        admin.resource(deployment(name, engine)
                        .namespace(NS)
                        .role(role("server").replicas(1))
                        .scaling("server", 1)
                        .build())
                .create();
        await("one ready")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(readyPods(name))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(1));
        Pod pod = world.podsOf(name).get(0);
        // 12 s of tokens, well inside the rendered 30 s grace
        try (LoadGenerator client = new LoadGenerator(ClusterWorld.straightTo(pod), 1, 120, Duration.ofMillis(100))) {
            CompletableFuture<LoadGenerator.Request> stream = CompletableFuture.supplyAsync(client::send);
            await("streaming").atMost(Duration.ofSeconds(10)).until(() -> inFlight(pod) > 0);

            if (scriptDeleted) {
                // the kubelet keeps what it mounted: the hook runs from that copy whatever became of the ConfigMap
                world.kubectl(
                        "delete", "configmap", PodRenderer.hookConfigMapOf(pod).orElseThrow(), "-n", NS);
            }
            Instant deleted = Instant.now();
            world.kubectl("delete", "pod", pod.getMetadata().getName(), "-n", NS, "--wait=false");
            // the hook's reads reach the container's log while it holds the Pod
            await("the hook's reads in kubectl logs")
                    .atMost(Duration.ofSeconds(15))
                    .untilAsserted(() -> assertThat(
                                    world.kubectl("logs", pod.getMetadata().getName(), "-n", NS))
                            .contains("ebb drain hook: t=", "read: busy"));

            LoadGenerator.Request request = stream.get(60, TimeUnit.SECONDS);
            assertThat(request.outcome()).as(request.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
            await("the engine's last state")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> ENDED.containsKey(pod.getMetadata().getName()));
            ContainerStateTerminated ended = ENDED.get(pod.getMetadata().getName());
            assertThat(ended.getExitCode())
                    .as("the engine's exit status (%s)", ended.getReason())
                    .isNotEqualTo(ProcessContainer.KILLED);
            assertThat(HookEnding.in(ended.getMessage()))
                    .as("the hook's ending in the termination message: %s", ended.getMessage())
                    .hasValueSatisfying(ending -> assertThat(ending.kind()).isEqualTo(HookEnding.Kind.IDLE));
            String sigtermLine = ended.getMessage()
                    .lines()
                    .filter(line -> line.startsWith(EngineProgram.SIGTERM_AT))
                    .findFirst()
                    .orElseThrow();
            Instant sigterm = Instant.parse(
                    sigtermLine.substring(EngineProgram.SIGTERM_AT.length()).strip());
            assertThat(sigterm).as("SIGTERM, sent once the hook returned").isAfter(request.end());
            System.out.printf(
                    "%s deleted while streaming: the generation ended %.1f s after the delete; the kubelet sent SIGTERM %.1f s after"
                            + " it ended; the engine exited at %s%n",
                    engine,
                    Duration.between(deleted, request.end()).toMillis() / 1000.0,
                    Duration.between(request.end(), sigterm).toMillis() / 1000.0,
                    ended.getFinishedAt());
        }
    }

    /**
     * The operator's member reads inside a real engine container, through the API server and the kubelet: the
     * scripts arrive on stdin (which the operator's client can never close) and each read ends with its answer; the
     * exec request lines, what an audit log records and a proxy's request-line limit measures, stay under 2 KiB.
     */
    @Test
    void theMemberReadsSendTheirScriptsOnStdinAndTheirRequestLinesStaySmall() throws Exception {
        admin.resource(deployment("reads", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(1))
                        .scaling("server", 1)
                        .build())
                .create();
        await("one ready")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(readyPods("reads"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(1));
        Pod pod = world.podsOf("reads").get(0);
        int port = pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort();
        List<String> lines = new CopyOnWriteArrayList<>();
        try (KubernetesClient recording = RequestLines.recording(admin.getConfiguration(), lines);
                LoadGenerator client =
                        new LoadGenerator(ClusterWorld.straightTo(pod), 1, 100, Duration.ofMillis(100))) {
            CompletableFuture<LoadGenerator.Request> stream = CompletableFuture.supplyAsync(client::send);
            await("streaming").atMost(Duration.ofSeconds(10)).until(() -> inFlight(pod) > 0);

            MemberWork work = new MemberReader(new Fabric8PodExec(recording), new SimpleMeterRegistry())
                    .readWork(pod, ReplicaClassifier.engineOf(pod).orElseThrow(), Optional.of(port))
                    .await()
                    .atMost(Duration.ofSeconds(20));

            assertThat(work.gauges()).isEqualTo(new Reading.Busy(1));
            assertThat(work.connections())
                    .hasValueSatisfying(peers -> assertThat(peers)
                            // the client, and any prober or page reader still connected
                            .isInstanceOfSatisfying(
                                    ConnectionRead.Peers.Connected.class,
                                    connected -> assertThat(connected.count()).isPositive()));
            assertThat(stream.get(60, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }
        List<Integer> execLines = lines.stream()
                .filter(line -> line.contains("/exec?"))
                .map(String::length)
                .toList();
        System.out.printf("the member reads' exec request lines: %s bytes%n", execLines);
        assertThat(execLines).hasSize(2).allSatisfy(length -> assertThat(length).isLessThan(2048));
    }

    /**
     * The hook's ConfigMap is not optional: a Pod that mounts one not yet there stays ContainerCreating, its engine never
     * started and so never serving without its hook, and starts once the ConfigMap appears.
     */
    @Test
    void aPodWhoseHookScriptIsNotThereYetDoesNotStartUntilItIs() throws Exception {
        admin.resource(deployment("early", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(1))
                        .scaling("server", 1)
                        .build())
                .create();
        await("one ready")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(readyPods("early"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(1));
        Pod rendered = world.podsOf("early").get(0);
        String missing = "early-drain-hook-not-yet";
        Pod early = new PodBuilder()
                .withNewMetadata()
                .withName("early-by-hand")
                .withNamespace(NS)
                .endMetadata()
                .withSpec(new PodSpecBuilder(rendered.getSpec())
                        .editMatchingVolume(v -> v.getName().equals(PodRenderer.DRAIN_HOOK_VOLUME))
                        .editConfigMap()
                        .withName(missing)
                        .endConfigMap()
                        .endVolume()
                        .build())
                .build();
        admin.resource(early).create();

        Instant created = Instant.now();
        await("the kubelet telling that it cannot mount the script")
                .atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> assertThat(
                                admin.v1().events().inNamespace(NS).list().getItems())
                        .as("events")
                        .anySatisfy(event -> {
                            assertThat(event.getInvolvedObject().getName()).isEqualTo("early-by-hand");
                            assertThat(event.getReason()).isEqualTo("FailedMount");
                        }));
        assertThat(admin.pods()
                        .inNamespace(NS)
                        .withName("early-by-hand")
                        .get()
                        .getStatus()
                        .getContainerStatuses())
                .allSatisfy(status -> assertThat(status.getState().getRunning()).isNull());

        admin.resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(missing)
                        .withNamespace(NS)
                        .endMetadata()
                        .withData(Map.of(DrainHook.FILE, DrainHook.SCRIPT))
                        .build())
                .create();
        await("running once the script is there")
                .atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(Readiness.isPodReady(admin.pods()
                                .inNamespace(NS)
                                .withName("early-by-hand")
                                .get()))
                        .isTrue());
        System.out.printf(
                "a Pod whose hook script was missing waited %.0f s without starting; it started once the script was there%n",
                Duration.between(created, Instant.now()).toMillis() / 1000.0);
        admin.pods()
                .inNamespace(NS)
                .withName("early-by-hand")
                .withGracePeriod(0)
                .delete();
    }

    private static URI clusterIp(String deployment) {
        Service service = admin.services()
                .inNamespace(NS)
                .withName(Names.roleService(deployment, "server"))
                .get();
        return URI.create("http://" + service.getSpec().getClusterIP() + ":"
                + service.getSpec().getPorts().get(0).getPort());
    }

    /** The requests the engine holds, by its own page at the Pod's address read as the member reads read it. */
    private static double inFlight(Pod pod) {
        int port = pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort();
        try {
            String page = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(
                                            "http://" + pod.getStatus().getPodIP() + ":" + port + "/metrics"))
                                    .timeout(Duration.ofSeconds(2))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            return PrometheusText.read(
                                    page,
                                    InFlightGauges.of(
                                            ReplicaClassifier.engineOf(pod).orElseThrow()))
                            instanceof Reading.Busy busy
                    ? busy.inFlight()
                    : 0;
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    private static long readyPods(String deployment) {
        return admin.pods().inNamespace(NS).withLabel(Labels.ROLE).list().getItems().stream()
                .filter(p -> p.getMetadata().getName().startsWith(deployment + "-"))
                .filter(Readiness::isPodReady)
                .count();
    }
}
