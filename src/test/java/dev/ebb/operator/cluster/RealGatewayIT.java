package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.reconcile.ShortenedGraces;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterRenderer;
import dev.ebb.operator.route.RouterAnswers;
import dev.ebb.operator.route.RouterFixtures;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.ProcessContainer;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.ServiceTarget;
import dev.ebb.operator.sim.Termination;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * SGLang's model gateway as released, in front of the test world's engines on the real control plane: it runs the
 * arguments the operator rendered as the ServiceAccount the operator rendered, finds the engine Pods itself, carries
 * clients' streams, and lets the operator take replicas away through its worker API without cutting one.
 */
class RealGatewayIT {
    private static final String NS = "real-gateway";
    private static final Duration TOKEN = Duration.ofMillis(100);
    private static final String ROLLED_TO = "lmsysorg/sglang:v0.5.22";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();
    private static ClusterWorld world;
    private static KubernetesClient admin;
    private static Path logs;

    @BeforeAll
    static void start() throws Exception {
        assertThat(RealGateway.installed())
                .as("make router-env installs smg %s first", RealGateway.RELEASE)
                .isTrue();
        world = ClusterWorld.start(NS, NS);
        admin = world.admin;
        logs = Files.createDirectories(world.plane.logs().resolve("gateways"));
        world.node.kubelet().runRoutersWith(new RealGateway(admin, logs));
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    /**
     * A scale-down from three replicas to two and an image rollout of the two, under streams through the gateway: none
     * cut, and no engine Pod deleted while the gateway still listed it, as the operator's withdrawal proof holds.
     */
    @Test
    void aScaleDownAndARolloutBehindTheReleasedGatewayCutNothingAndDeleteNoPodItStillLists() throws Exception {
        String md = "gw";
        admin.resource(deployment(md, "SGLang")
                        .namespace(NS)
                        .router("sglang-gateway")
                        .role(Specs.role("server").replicas(3))
                        .scaling("server", 3)
                        .build())
                .create();
        await("the gateway Pod ready by its own probe, three engines ready")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> {
                    assertThat(routerPods(md))
                            .as(ClusterState.describe(admin, NS))
                            .hasSize(1)
                            .allMatch(Readiness::isPodReady);
                    assertThat(enginePods(md)).hasSize(3).allMatch(Readiness::isPodReady);
                });
        Pod gateway = routerPods(md).get(0);
        await("the gateway lists every engine it found")
                .atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(workerUrls(gateway)).isEqualTo(engineUrls(md)));
        List<Pod> first = enginePods(md);
        Set<String> before =
                new TreeSet<>(first.stream().map(p -> p.getMetadata().getUid()).toList());
        // names are kept by a replica's new Pods; each first Pod is deleted once, and no later one is
        Map<String, String> firstAddress = new HashMap<>();
        first.forEach(
                p -> firstAddress.put(p.getMetadata().getName(), p.getStatus().getPodIP()));

        Random lengths = new Random(23);
        try (ListedWorkers listed = new ListedWorkers(gateway);
                LoadGenerator load = new LoadGenerator(
                        new ServiceTarget(world.endpointSlices(), NS, Names.router(md)),
                        4,
                        () -> 30 + lengths.nextInt(71),
                        TOKEN)) {
            load.asking(servedModel(enginePods(md).get(0))).start(Duration.ofMinutes(5));
            await("streams through the gateway")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> load.requests().size() >= 4);

            assertThat(world.kubectl("scale", "md/" + md, "--replicas=2", "-n", NS))
                    .contains("scaled");
            await("two replicas left, the retirement done")
                    .atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> {
                        assertThat(enginePods(md))
                                .as(ClusterState.describe(admin, NS))
                                .hasSize(2);
                        assertThat(world.retirements(md)).isEmpty();
                    });
            Specs.editRole(admin, NS, md, "server", r -> Specs.withImage(r, ROLLED_TO));
            await("both replaced at the new image and serving")
                    .atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> {
                        assertThat(enginePods(md))
                                .as(ClusterState.describe(admin, NS))
                                .hasSize(2)
                                .allSatisfy(p -> {
                                    assertThat(before)
                                            .doesNotContain(p.getMetadata().getUid());
                                    assertThat(p.getSpec()
                                                    .getContainers()
                                                    .get(0)
                                                    .getImage())
                                            .isEqualTo(ROLLED_TO);
                                    assertThat(Readiness.isPodReady(p)).isTrue();
                                });
                        assertThat(world.retirements(md)).isEmpty();
                    });
            load.stop(Duration.ofSeconds(30));
            List<String> lost = load.requests().stream()
                    .filter(r -> r.outcome() != LoadGenerator.Outcome.COMPLETED)
                    .map(r -> r.outcome() + " " + r.why())
                    .toList();
            System.out.printf(
                    "smg %s: %d streams completed through it over a 3 -> 2 scale-down and a rollout of 2, %d cut, %d rejected%n",
                    RealGateway.RELEASE,
                    load.count(LoadGenerator.Outcome.COMPLETED),
                    load.count(LoadGenerator.Outcome.CUT),
                    load.count(LoadGenerator.Outcome.REJECTED));
            assertThat(lost).isEmpty();
            assertThat(load.count(LoadGenerator.Outcome.COMPLETED)).isGreaterThanOrEqualTo(8);

            assertThat(RecordedEvents.occurrences(admin, NS))
                    .as("no warning of a shortened grace for the kubelet's own last delete")
                    .noneMatch(e -> ShortenedGraces.REASON.equals(e.getReason()));
            List<Termination> deleted = world.node.kubelet().terminations().stream()
                    .filter(t -> t.pod().startsWith(md + "-server-"))
                    .toList();
            assertThat(deleted).as("the replica scaled away and the two rolled").hasSize(3);
            for (Termination t : deleted) {
                String ip = firstAddress.get(t.pod());
                assertThat(listed.lastListed(ip))
                        .as("%s (%s) last listed by the gateway before its deletion", t.pod(), ip)
                        .hasValueSatisfying(last -> assertThat(last).isBefore(t.deletionSeen()));
            }
        }
        assertThat(workerUrls(gateway))
                .as("the gateway lists the replicas left")
                .isEqualTo(engineUrls(md));
        admin.resources(ModelDeployment.class).inNamespace(NS).withName(md).delete();
    }

    /** When the gateway last listed a worker on each host, looked at every 200 ms. */
    private static final class ListedWorkers implements AutoCloseable {
        private final Map<String, Instant> lastListed = new ConcurrentHashMap<>();
        private final ScheduledExecutorService poller =
                Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("listed-workers"));

        ListedWorkers(Pod gateway) {
            poller.scheduleWithFixedDelay(
                    () -> {
                        try {
                            Instant now = Instant.now();
                            workerUrls(gateway)
                                    .forEach(url ->
                                            lastListed.put(URI.create(url).getHost(), now));
                        } catch (IOException | RuntimeException e) {
                            // a missed look only makes the last one seen earlier; the assertion is on what was seen
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    0,
                    200,
                    TimeUnit.MILLISECONDS);
        }

        Optional<Instant> lastListed(String host) {
            return Optional.ofNullable(lastListed.get(host));
        }

        @Override
        public void close() {
            poller.shutdownNow();
        }
    }

    /**
     * The answers the operator reads and the fixtures its tests read them from: every fixture of the gateway's worker
     * API has the fields, and the refusals the status, the real gateway answers with.
     */
    @Test
    void theWorkerApiAnswersWithTheFieldsTheFixturesHold() throws Exception {
        String md = "pages";
        admin.resource(deployment(md, "SGLang")
                        .namespace(NS)
                        .router("sglang-gateway")
                        .role(Specs.role("server"))
                        .build())
                .create();
        try {
            await("the gateway lists the engine").atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
                assertThat(routerPods(md))
                        .as(ClusterState.describe(admin, NS))
                        .hasSize(1)
                        .allMatch(Readiness::isPodReady);
                assertThat(workerUrls(routerPods(md).get(0))).hasSize(1).isEqualTo(engineUrls(md));
            });
            URI workers =
                    URI.create("http://" + routerPods(md).get(0).getStatus().getPodIP() + ":30000/workers");
            HttpResponse<String> listed = send(HttpRequest.newBuilder(workers));
            assertThat(paths(JSON.readTree(listed.body())))
                    .as(listed.body())
                    .isEqualTo(paths(fixture("workers-discovered.json")));
            String engineIp = enginePods(md).get(0).getStatus().getPodIP();
            assertThat(RouterAnswers.sglangWorkers(listed.body()))
                    .hasValueSatisfying(hosts -> assertThat(hosts).containsOnlyKeys(engineIp));

            HttpResponse<String> unknown = send(HttpRequest.newBuilder(workers.resolve("/workers/" + UUID.randomUUID()))
                    .DELETE());
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(paths(JSON.readTree(unknown.body())))
                    .as(unknown.body())
                    .isEqualTo(paths(fixture("delete-not-found.json")));
            HttpResponse<String> invalid = send(HttpRequest.newBuilder(workers.resolve("/workers/not-a-uuid"))
                    .DELETE());
            assertThat(invalid.statusCode()).isEqualTo(400);
            assertThat(JSON.readTree(invalid.body())).isEqualTo(fixture("delete-invalid-id.json"));

            // an address no engine listens on: the gateway queues it all the same, and its removal
            HttpResponse<String> created = send(HttpRequest.newBuilder(workers)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"url\":\"http://" + engineIp + ":9\"}")));
            assertThat(created.statusCode()).as(created.body()).isEqualTo(202);
            JsonNode queued = JSON.readTree(created.body());
            assertThat(paths(queued)).isEqualTo(paths(fixture("create-accepted.json")));
            assertThat(created.headers().firstValue("Location"))
                    .hasValue(queued.path("location").asText());
            HttpResponse<String> removed = send(HttpRequest.newBuilder(
                            workers.resolve(queued.path("location").asText()))
                    .DELETE());
            assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
            assertThat(paths(JSON.readTree(removed.body()))).isEqualTo(paths(fixture("delete-accepted.json")));
        } finally {
            admin.resources(ModelDeployment.class).inNamespace(NS).withName(md).delete();
        }
    }

    /**
     * When the released gateway takes a Pod up and lets it go, measured against its own worker list: what the fake
     * gateway's timing ({@code FakeRouter.Timing.asReleased}) and the operator's withdrawal rest on. Pods made by hand,
     * apart from the operator, each running a fake SGLang engine, and a gateway of their own selecting them.
     */
    @Test
    void theGatewayTakesAPodOnceReadyAndLetsItGoOnlyAtItsDeletion() throws Exception {
        int port = freePort();
        List<String> args = List.of(
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--prometheus-host",
                "127.0.0.1",
                "--prometheus-port",
                Integer.toString(freePort()),
                "--service-discovery",
                "--selector",
                "test.ebb.dev/lag=probe",
                "--service-discovery-port",
                "8000",
                "--service-discovery-namespace",
                NS);
        ProcessContainer gateway =
                RealGateway.launch(args, Map.of(), world.plane.adminKubeconfig(), logs.resolve("lag-gateway.log"));
        URI workers = URI.create("http://127.0.0.1:" + port + "/workers");
        try {
            await("the gateway answering")
                    .atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> listedHosts(workers).isEmpty());
            Map<String, String> selected = Map.of("test.ebb.dev/lag", "probe");
            for (String name : List.of("lag-a", "lag-b", "lag-c")) {
                admin.resource(new PodBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .withNamespace(NS)
                                .withLabels(selected)
                                .endMetadata()
                                .withNewSpec()
                                .withNodeSelector(Map.of("kubernetes.io/hostname", world.node.name()))
                                .withTerminationGracePeriodSeconds(30L)
                                .addNewContainer()
                                .withName("engine")
                                .withImage("lmsysorg/sglang:v0.5.23")
                                .withCommand(
                                        "python3",
                                        "-m",
                                        "sglang.launch_server",
                                        "--model-path",
                                        "m",
                                        "--served-model-name",
                                        "m",
                                        "--host",
                                        "0.0.0.0",
                                        "--port",
                                        "8000",
                                        "--enable-metrics")
                                .addNewPort()
                                .withContainerPort(8000)
                                .endPort()
                                .endContainer()
                                .endSpec()
                                .build())
                        .create();
            }
            await("three Pods Ready")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> Stream.of("lag-a", "lag-b", "lag-c")
                            .allMatch(n -> Readiness.isPodReady(
                                    admin.pods().inNamespace(NS).withName(n).get())));
            long readyAt = System.nanoTime();
            await("all three listed")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> listedHosts(workers).size() == 3);
            Duration taken = Duration.ofNanos(System.nanoTime() - readyAt);

            String unlabelled = ip("lag-a");
            admin.pods().inNamespace(NS).withName("lag-a").edit(p -> {
                p.getMetadata().getLabels().remove("test.ebb.dev/lag");
                return p;
            });
            String notReady = ip("lag-b");
            admin.pods().inNamespace(NS).withName("lag-b").editStatus(p -> {
                p.getStatus().getConditions().stream()
                        .filter(c -> c.getType().equals("Ready"))
                        .forEach(c -> c.setStatus("False"));
                return p;
            });
            String deleted = ip("lag-c");
            long deletedAt = System.nanoTime();
            admin.pods().inNamespace(NS).withName("lag-c").delete();
            Set<String> statuses = new TreeSet<>();
            await("the deleted Pod let go")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        Optional<String> status = statusOf(workers, deleted);
                        status.ifPresent(statuses::add);
                        return status.isEmpty();
                    });
            Duration letGo = Duration.ofNanos(System.nanoTime() - deletedAt);
            await("a label change and NotReady seen by now")
                    .during(Duration.ofSeconds(10))
                    .atMost(Duration.ofSeconds(11))
                    .until(() -> listedHosts(workers).containsAll(List.of(unlabelled, notReady)));
            System.out.printf(
                    "smg %s: a Ready Pod listed after %d ms; a deleted one gone %d ms after the delete; a Pod out of the selector "
                            + "and a NotReady one still listed 10 s later%n",
                    RealGateway.RELEASE, taken.toMillis(), letGo.toMillis());
            Duration settle = FakeRouter.Timing.asReleased().drainSettle();
            assertThat(statuses)
                    .as("listed as draining from its deletion until it leaves")
                    .containsExactly("draining");
            assertThat(letGo)
                    .as("gone after the settle the fake gateway keeps")
                    .isBetween(settle.minusMillis(500), settle.plusSeconds(5));
        } finally {
            gateway.kill();
            Stream.of("lag-a", "lag-b", "lag-c")
                    .forEach(n -> admin.pods()
                            .inNamespace(NS)
                            .withName(n)
                            .withGracePeriod(0)
                            .delete());
        }
    }

    private static String ip(String pod) {
        return admin.pods().inNamespace(NS).withName(pod).get().getStatus().getPodIP();
    }

    private static Set<String> listedHosts(URI workers) throws IOException, InterruptedException {
        return RouterAnswers.sglangWorkers(send(HttpRequest.newBuilder(workers)).body())
                .orElseThrow()
                .keySet();
    }

    /** The status the gateway lists the worker on this host with; empty once it lists none there. */
    private static Optional<String> statusOf(URI workers, String host) throws IOException, InterruptedException {
        for (Iterator<JsonNode> it = JSON.readTree(
                                send(HttpRequest.newBuilder(workers)).body())
                        .path("workers")
                        .elements();
                it.hasNext(); ) {
            JsonNode worker = it.next();
            if (URI.create(worker.path("url").asText()).getHost().equals(host)) {
                return Optional.of(worker.path("status").asText());
            }
        }
        return Optional.empty();
    }

    private static int freePort() throws IOException {
        try (ServerSocket free = new ServerSocket(0)) {
            return free.getLocalPort();
        }
    }

    private static JsonNode fixture(String name) throws IOException {
        return JSON.readTree(RouterFixtures.read("sglang-gateway/" + name));
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return HTTP.send(request.timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Every field's path in a JSON document, array elements under "[]": the shape, whatever the values. */
    private static Set<String> paths(JsonNode node) {
        Set<String> paths = new TreeSet<>();
        collect(node, "", paths);
        return paths;
    }

    private static void collect(JsonNode node, String at, Set<String> paths) {
        if (node.isObject()) {
            node.fields().forEachRemaining(field -> {
                paths.add(at + "." + field.getKey());
                collect(field.getValue(), at + "." + field.getKey(), paths);
            });
        } else if (node.isArray()) {
            node.elements().forEachRemaining(element -> collect(element, at + "[]", paths));
        }
    }

    private static List<Pod> routerPods(String md) {
        return admin
                .pods()
                .inNamespace(NS)
                .withLabel(Labels.DEPLOYMENT, md)
                .withLabel(RouterRenderer.COMPONENT, RouterRenderer.COMPONENT_ROUTER)
                .list()
                .getItems()
                .stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .toList();
    }

    private static List<Pod> enginePods(String md) {
        return admin.pods()
                .inNamespace(NS)
                .withLabel(Labels.DEPLOYMENT, md)
                .withLabel(Labels.ROLE)
                .list()
                .getItems();
    }

    private static String servedModel(Pod engine) {
        List<String> command = engine.getSpec().getContainers().get(0).getCommand();
        return command.get(command.indexOf("--served-model-name") + 1);
    }

    private static Set<String> engineUrls(String md) {
        Set<String> urls = new TreeSet<>();
        for (Pod pod : enginePods(md)) {
            urls.add("http://" + pod.getStatus().getPodIP() + ":"
                    + pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort());
        }
        return urls;
    }

    private static JsonNode workers(Pod gateway) throws IOException, InterruptedException {
        HttpResponse<String> answer = send(HttpRequest.newBuilder(
                URI.create("http://" + gateway.getStatus().getPodIP() + ":30000/workers")));
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        return JSON.readTree(answer.body());
    }

    private static Set<String> workerUrls(Pod gateway) throws IOException, InterruptedException {
        Set<String> urls = new TreeSet<>();
        for (Iterator<JsonNode> it = workers(gateway).path("workers").elements(); it.hasNext(); ) {
            urls.add(it.next().path("url").asText());
        }
        return urls;
    }
}
