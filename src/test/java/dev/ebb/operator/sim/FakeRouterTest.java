package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterAdmin;
import dev.ebb.operator.route.HttpRouterProbe;
import dev.ebb.operator.route.RouterView;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

@EnableKubernetesMockClient(crud = true)
class FakeRouterTest {
    static final String NS = "sim";
    private static final Map<String, String> WATCH = Map.of("app", "x");
    private static final Map<String, String> SELECTOR = Map.of("app", "x", "serving", "true");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration QUICK = Duration.ofSeconds(5);
    KubernetesClient client;
    private SimWorld world;
    private final List<FakeRouter> routers = new ArrayList<>();
    private volatile URI routerAdmin;
    private final HttpRouterProbe operatorProbe = new HttpRouterProbe((routerPod, kind) -> Optional.of(routerAdmin));

    @BeforeEach
    void start() {
        world = new SimWorld(client);
        for (String name : new String[] {"a", "b"}) {
            Pod pod = new PodBuilder(SimKubeletTest.enginePod(name, 15L, null))
                    .editMetadata()
                    .addToLabels("app", "x")
                    .addToLabels("serving", "true")
                    .endMetadata()
                    .build();
            client.resource(pod).create();
        }
        await().atMost(QUICK)
                .until(() -> Stream.of("a", "b")
                        .allMatch(n ->
                                pod(n).getStatus() != null && pod(n).getStatus().getPodIP() != null));
    }

    @AfterEach
    void stop() {
        routers.forEach(FakeRouter::close);
        world.close();
    }

    private FakeRouter router(RouterKind kind) {
        return router(kind, FakeRouter.Timing.asReleased());
    }

    /** A router of this kind holding both Pods. */
    private FakeRouter router(RouterKind kind, FakeRouter.Timing timing) {
        FakeRouter router = new FakeRouter(client, NS, kind, WATCH, SELECTOR, timing);
        routers.add(router);
        await().atMost(QUICK).until(() -> router.selected().size() == 2);
        return router;
    }

    private Pod pod(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private FakeEngine engine(String name) {
        return world.kubelet().engine(NS, name).orElseThrow();
    }

    private void edit(String name, Consumer<Pod> change) {
        client.pods().inNamespace(NS).withName(name).edit(p -> {
            change.accept(p);
            return p;
        });
    }

    private void withdrawByLabel(String name) {
        edit(name, p -> p.getMetadata().getLabels().put("serving", "false"));
    }

    private void turnNotReady(String name) {
        client.pods().inNamespace(NS).withName(name).editStatus(p -> {
            p.getStatus().getConditions().stream()
                    .filter(c -> c.getType().equals("Ready"))
                    .forEach(c -> c.setStatus("False"));
            p.getStatus().getContainerStatuses().forEach(c -> c.setReady(false));
            return p;
        });
    }

    private void delete(String name) {
        client.pods().inNamespace(NS).withName(name).delete();
    }

    private static HttpResponse<String> call(String method, URI uri) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(uri)
                                .method(method, HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    private static String get(URI uri, int expectedStatus) throws Exception {
        HttpResponse<String> response = call("GET", uri);
        assertThat(response.statusCode()).isEqualTo(expectedStatus);
        return response.body();
    }

    private static String fixture(String path) throws Exception {
        try (InputStream in = FakeRouterTest.class.getResourceAsStream("/routers/" + path)) {
            assertThat(in).as(path).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** What the operator's own probe makes of the router's answer about one member. */
    private RouterView probe(RouterKind kind, FakeRouter router, String member) {
        ModelDeployment md = Specs.deployment("md", kind == RouterKind.SGLANG_GATEWAY ? "SGLang" : "vLLM")
                .namespace(NS)
                .router(kind.wireName())
                .role(Specs.role("s"))
                .build();
        routerAdmin = router.adminUri();
        return operatorProbe.view(
                md, List.of(SimRouterPods.ready(NS, "md-router-0", "127.0.0.1")), List.of(pod(member)));
    }

    // --- a router leaving ---

    @Test
    void aGracefulShutDownLetsTheStreamInProgressEndRefusesNewConnectionsAndStopsOnceNothingIsLeft() throws Exception {
        FakeRouter router = router(RouterKind.VLLM_ROUTER);
        LoadGenerator load = new LoadGenerator(router, 1, 30, Duration.ofMillis(100));
        CompletableFuture<LoadGenerator.Request> stream = inFlight(router, load);

        router.shutDown(Duration.ZERO, Duration.ofSeconds(60));

        await().atMost(QUICK)
                .untilAsserted(() -> assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED));
        assertThat(stream.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        // long before the 60 s bound: the stop ends with the last request
        await("stopped once the stream ended").atMost(QUICK).until(router::stopped);
    }

    @Test
    void aShutDownsBoundCutsWhatOutlastsIt() throws Exception {
        FakeRouter router = router(RouterKind.SGLANG_GATEWAY);
        CompletableFuture<LoadGenerator.Request> stream =
                inFlight(router, new LoadGenerator(router, 1, 100, Duration.ofMillis(100)));

        router.shutDown(Duration.ZERO, Duration.ofSeconds(1));

        assertThat(stream.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
        await().atMost(QUICK).until(router::stopped);
    }

    /** One request of the load, sent and streaming through the router. */
    private static CompletableFuture<LoadGenerator.Request> inFlight(FakeRouter router, LoadGenerator load) {
        CompletableFuture<LoadGenerator.Request> stream = CompletableFuture.supplyAsync(load::send);
        await().atMost(QUICK).until(() -> router.clientsInFlight() == 1);
        return stream;
    }

    /** As Envoy 1.36.2 answered when it was run here. */
    @Test
    void envoysAdminInterfaceFailsItsHealthCheckOnPostOnlyAndCountsTheClientsRequestsInFlight() throws Exception {
        LoopbackAddresses addresses = new LoopbackAddresses();
        FakeRouter router = FakeRouter.inPodOf(
                client,
                NS,
                "x",
                RouterKind.LLM_D_ROUTER,
                addresses.next(),
                0,
                Optional.of(new InetSocketAddress(addresses.next(), 0)));
        routers.add(router);
        URI admin = router.proxyAdmin().orElseThrow();
        String gauge = "http.http-" + router.clientEntry().getPort() + ".downstream_rq_active";

        assertThat(call("GET", admin.resolve("/healthcheck/fail")).statusCode()).isEqualTo(405);
        assertThat(router.healthCheckFailed()).isFalse();
        assertThat(call("POST", admin.resolve("/healthcheck/fail")).statusCode())
                .isEqualTo(200);
        assertThat(router.healthCheckFailed()).isTrue();
        assertThat(get(admin.resolve("/stats?filter=" + gauge), 200)).isEqualTo(gauge + ": 0\n");
        assertThat(get(admin.resolve("/stats?filter=nothing_like_it"), 200)).isEmpty();
        assertThat(call("GET", admin.resolve("/stats?filter=(")).statusCode()).isEqualTo(400);
    }

    // --- clients stream through the router ---

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void clientsStreamThroughTheRoutersEntryWhichSpreadsThemAndNamesTheServingPod(RouterKind kind) {
        FakeRouter router = router(kind);
        LoadGenerator load = new LoadGenerator(router, 1, 3, Duration.ofMillis(5));

        for (int i = 0; i < 4; i++) {
            assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }

        assertThat(router.dispatches()).extracting(FakeRouter.Dispatch::pod).containsExactly("a", "b", "a", "b");
        assertThat(load.requests()).extracting(LoadGenerator.Request::pod).containsExactly("a", "b", "a", "b");
        assertThat(router.clientEntry().getHost())
                .isNotEqualTo(pod("a").getStatus().getPodIP())
                .isNotEqualTo(pod("b").getStatus().getPodIP());
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void theRouterReusesPooledKeepAliveConnectionsToEachEngine(RouterKind kind) {
        FakeRouter router = router(kind);
        LoadGenerator load = new LoadGenerator(router, 1, 2, Duration.ofMillis(1));

        for (int i = 0; i < 20; i++) {
            assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }

        // ten requests each, one after another: a router opening a connection per request would show ten
        assertThat(List.of(engine("a").completionConnections(), engine("b").completionConnections()))
                .allSatisfy(n -> assertThat(n).isBetween(1, 2));
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void tokensReachTheClientAsTheEngineSendsThem(RouterKind kind) throws Exception {
        FakeRouter router = router(kind);
        HttpRequest request = HttpRequest.newBuilder(router.clientEntry().resolve("/v1/completions"))
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"model\":\"m\",\"stream\":true,\"max_tokens\":100,\"token_interval_ms\":100}"))
                .build();
        HttpResponse<Stream<String>> response =
                HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofLines());
        Instant headers = Instant.now();
        try (Stream<String> lines = response.body()) {
            Iterator<String> it = lines.iterator();
            assertThat(it.next()).startsWith("data: ");
            // the whole answer takes 10 s at the engine: a router that buffered it would hand over nothing before then
            assertThat(Duration.between(headers, Instant.now())).isLessThan(Duration.ofSeconds(5));
        }
        assertThat(response.headers().firstValue(FakeRouter.SERVED_BY))
                .hasValueSatisfying(pod -> assertThat(pod).isIn("a", "b"));
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void anEngineStreamThatBreaksEndsTheClientsStreamEarly(RouterKind kind) throws Exception {
        FakeRouter router = router(kind);
        LoadGenerator load = new LoadGenerator(router, 1, 500, Duration.ofMillis(20));
        CompletableFuture<LoadGenerator.Request> sent = CompletableFuture.supplyAsync(load::send);
        await().atMost(QUICK).until(() -> engine("a").inFlight() == 1);

        engine("a").kill();

        LoadGenerator.Request request = sent.get(10, TimeUnit.SECONDS);
        assertThat(request.outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
        assertThat(request.pod()).isEqualTo("a");
        // the whole stream would take 10 s
        assertThat(request.end()).isBefore(request.start().plusSeconds(8));
    }

    /** An engine connection that drops mid-chunk drops the client's too: no closing chunk makes the stream look whole. */
    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void anEngineConnectionDroppedMidStreamDropsTheClientsConnection(RouterKind kind) throws Exception {
        FakeRouter router = router(kind);
        String address = pod("a").getStatus().getPodIP();
        engine("a").kill();
        try (ServerSocket engine = new ServerSocket(8000, 1, InetAddress.getByName(address))) {
            CompletableFuture<Void> dropsMidStream = CompletableFuture.runAsync(() -> {
                try (Socket connection = engine.accept()) {
                    connection.getInputStream().read(new byte[8192]);
                    OutputStream out = connection.getOutputStream();
                    String token = "data: {\"choices\":[{\"text\":\" t0\"}]}\n\n";
                    out.write(
                            ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                                            + Integer.toHexString(token.length()) + "\r\n" + token + "\r\n")
                                    .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    Thread.sleep(200);
                    connection.setSoLinger(true, 0);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            LoadGenerator.Request request = new LoadGenerator(router, 1, 50, Duration.ofMillis(10)).send();

            dropsMidStream.get(10, TimeUnit.SECONDS);
            assertThat(request.pod()).isEqualTo("a");
            assertThat(request.outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
            assertThat(request.why()).startsWith("connection lost");
        }
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void withNoEndpointTheRouterRefusesBeforeAnythingStreams(RouterKind kind) {
        FakeRouter router = router(kind, FakeRouter.Timing.asReleased().withDrainSettle(Duration.ofSeconds(30)));
        delete("a");
        delete("b");
        await().atMost(QUICK).until(() -> router.selected().isEmpty());

        LoadGenerator.Request request = new LoadGenerator(router, 1, 5, Duration.ofMillis(1)).send();

        assertThat(request.outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED);
        assertThat(request.why()).isEqualTo("HTTP 503");
        assertThat(request.pod()).isNull();
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void aDownRouterAnswers503ToClientsAndTheOperatorCannotTell(RouterKind kind) throws Exception {
        FakeRouter router = router(kind);

        router.setUp(false);

        assertThat(new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send()).satisfies(r -> {
            assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED);
            assertThat(r.why()).isEqualTo("HTTP 503");
        });
        get(router.adminUri(), 503);
        assertThat(probe(kind, router, "a").unknownBecause())
                .hasValueSatisfying(why -> assertThat(why).endsWith("answered HTTP 503"));
        router.setUp(true);
        assertThat(router.selects("a")).isTrue();
    }

    // --- discovery as released ---

    static Stream<Arguments> dropsAtOnce() {
        Map<String, Consumer<FakeRouterTest>> changes = Map.of(
                "deletion timestamp", t -> t.delete("b"),
                "NotReady", t -> t.turnNotReady("b"),
                "label mismatch", t -> t.withdrawByLabel("b"));
        List<Arguments> rows = new ArrayList<>();
        for (RouterKind kind : List.of(RouterKind.LLM_D_ROUTER, RouterKind.VLLM_ROUTER)) {
            changes.forEach((name, change) -> rows.add(Arguments.of(kind, name, change)));
        }
        rows.add(Arguments.of(RouterKind.SGLANG_GATEWAY, "deletion timestamp", changes.get("deletion timestamp")));
        return rows.stream();
    }

    @ParameterizedTest(name = "{0} drops on {1}")
    @MethodSource("dropsAtOnce")
    void theRouterDropsAPodAtOnce(RouterKind kind, String what, Consumer<FakeRouterTest> change) throws Exception {
        FakeRouter router = router(kind);

        change.accept(this);

        await().atMost(QUICK).until(() -> !router.selects("b"));
        assertThat(router.selects("a")).isTrue();
        Instant after = Instant.now();
        assertThat(new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send().pod())
                .isEqualTo("a");
        assertThat(router.dispatchesTo("b", after)).isEmpty();
    }

    @Test
    void smgKeepsRoutingToAPodThatTurnedNotReadyEvenAcrossItsReconcile() {
        FakeRouter router = router(
                RouterKind.SGLANG_GATEWAY, FakeRouter.Timing.asReleased().withReconcileEvery(Duration.ofMillis(300)));

        turnNotReady("b");

        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> router.selects("b"));
    }

    @Test
    void smgSeesALabelChangeOnlyAtItsReconcile() throws Exception {
        FakeRouter released = router(RouterKind.SGLANG_GATEWAY);
        FakeRouter quick = router(
                RouterKind.SGLANG_GATEWAY, FakeRouter.Timing.asReleased().withReconcileEvery(Duration.ofSeconds(1)));

        withdrawByLabel("b");

        // the quick one's reconcile drops it; the released one's first reconcile is a minute away
        await().atMost(Duration.ofSeconds(10)).until(() -> !quick.selects("b"));
        assertThat(released.selects("b")).isTrue();
        assertThat(workerUrls(get(released.adminUri(), 200)))
                .contains(FakeRouter.base(pod("b")).toString());
    }

    @Test
    void smgWithdrawsAWorkerDeletedThroughItsAdminApiAndListsItAsDrainingMeanwhile() throws Exception {
        FakeRouter router = router(
                RouterKind.SGLANG_GATEWAY, FakeRouter.Timing.asReleased().withDrainSettle(Duration.ofSeconds(4)));
        String id = workerIdOf(router, "b");

        HttpResponse<String> accepted = call("DELETE", router.adminUri().resolve("/workers/" + id));

        assertThat(accepted.statusCode()).isEqualTo(202);
        assertThat(fieldNames(JSON.readTree(accepted.body())))
                .isEqualTo(fieldNames(JSON.readTree(fixture("sglang-gateway/delete-accepted.json"))));
        assertThat(JSON.readTree(accepted.body()).path("worker_id").asText()).isEqualTo(id);
        await().atMost(QUICK).until(() -> !router.selects("b"));
        JsonNode draining = worker(router, "b").orElseThrow();
        assertThat(draining.path("status").asText()).isEqualTo("draining");
        assertThat(draining.path("is_healthy").asBoolean()).isFalse();
        Instant after = Instant.now();
        assertThat(new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send().pod())
                .isEqualTo("a");
        assertThat(router.dispatchesTo("b", after)).isEmpty();

        await().atMost(Duration.ofSeconds(15)).until(() -> worker(router, "b").isEmpty());
        // its discovery still tracks the Pod, so a later event on it adds nothing back
        edit("b", p -> p.getMetadata().setAnnotations(Map.of("touched", "yes")));
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> !router.selects("b"));

        HttpResponse<String> again = call("DELETE", router.adminUri().resolve("/workers/" + id));
        assertThat(again.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(again.body()))
                .isEqualTo(JSON.readTree(fixture("sglang-gateway/delete-not-found.json")
                        .replace("5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21", id)));
    }

    /** What the operator does for a replica it keeps after telling smg to drop it: smg's discovery never adds it back. */
    @Test
    void smgAddsAWorkerPostedToItsAdminApiAndRefusesOneItHoldsOrOneWithoutScheme() throws Exception {
        FakeRouter router =
                router(RouterKind.SGLANG_GATEWAY, FakeRouter.Timing.asReleased().withDrainSettle(Duration.ZERO));
        String url = FakeRouter.base(pod("b")).toString();
        call("DELETE", router.adminUri().resolve("/workers/" + workerIdOf(router, "b")));
        await().atMost(QUICK).until(() -> worker(router, "b").isEmpty());

        HttpResponse<String> accepted = post(router.adminUri(), "{\"url\":\"" + url + "\"}");

        assertThat(accepted.statusCode()).isEqualTo(202);
        JsonNode body = JSON.readTree(accepted.body());
        assertThat(fieldNames(body))
                .isEqualTo(fieldNames(JSON.readTree(fixture("sglang-gateway/create-accepted.json"))));
        assertThat(body.path("url").asText()).isEqualTo(url);
        await().atMost(QUICK).until(() -> router.selects("b"));
        assertThat(workerIdOf(router, "b")).isEqualTo(body.path("worker_id").asText());
        assertThat(post(router.adminUri(), "{\"url\":\"" + url + "\"}")).satisfies(conflict -> {
            assertThat(conflict.statusCode()).isEqualTo(409);
            assertThat(JSON.readTree(conflict.body()).path("code").asText()).isEqualTo("WORKER_ALREADY_EXISTS");
        });
        assertThat(post(router.adminUri(), "{\"url\":\"" + url.substring("http://".length()) + "\"}"))
                .satisfies(bare -> {
                    assertThat(bare.statusCode()).isEqualTo(400);
                    assertThat(JSON.readTree(bare.body()).path("code").asText()).isEqualTo("BAD_REQUEST");
                });
        assertThat(post(router.adminUri(), "not json").statusCode()).isEqualTo(400);
        assertThat(post(router.adminUri(), "{\"models\":[]}").statusCode()).isEqualTo(422);
    }

    private static HttpResponse<String> post(URI uri, String body) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(uri)
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void smgAnswersAMalformedWorkerIdWith400() throws Exception {
        FakeRouter router = router(RouterKind.SGLANG_GATEWAY);

        HttpResponse<String> refused = call("DELETE", router.adminUri().resolve("/workers/not-a-uuid"));

        assertThat(refused.statusCode()).isEqualTo(400);
        JsonNode body = JSON.readTree(refused.body());
        assertThat(fieldNames(body))
                .isEqualTo(fieldNames(JSON.readTree(fixture("sglang-gateway/delete-invalid-id.json"))));
        assertThat(body.path("code").asText()).isEqualTo("BAD_REQUEST");
        assertThat(body.path("error").asText()).startsWith("Invalid worker_id 'not-a-uuid' (expected UUID). Error: ");
        assertThat(router.selected()).containsExactly("a", "b");
    }

    @Test
    void vllmRouterKeepsEnginesDeletedOrWithdrawnWhileItsWatchWasDown() throws Exception {
        FakeRouter router = router(RouterKind.VLLM_ROUTER);

        router.dropWatch();
        withdrawByLabel("a");
        delete("b");
        await().atMost(QUICK).until(() -> pod("b") == null);
        router.reconnectWatch();

        await().during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(2))
                .until(() -> router.selects("a") && router.selects("b"));
        Set<String> ids = new HashSet<>();
        JSON.readTree(get(router.adminUri(), 200))
                .forEach(card -> ids.add(card.path("engine_id").asText()));
        assertThat(ids)
                .contains(
                        FakeRouterPages.uuid5Dns("a").toString(),
                        FakeRouterPages.uuid5Dns("b").toString());
        // requests still go to the gone engine, and fail there
        List<LoadGenerator.Request> sent = new ArrayList<>();
        LoadGenerator load = new LoadGenerator(router, 1, 1, Duration.ofMillis(1));
        for (int i = 0; i < 4; i++) {
            sent.add(load.send());
        }
        assertThat(sent)
                .filteredOn(r -> "b".equals(r.pod()))
                .isNotEmpty()
                .allSatisfy(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED));
    }

    @Test
    void vllmRouterSeesChangesAgainOnceItsWatchIsBack() {
        FakeRouter router = router(RouterKind.VLLM_ROUTER);
        router.dropWatch();
        router.reconnectWatch();

        withdrawByLabel("b");

        await().atMost(QUICK).until(() -> !router.selects("b"));
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void aDiscoveryLagKeepsTheOldViewUntilItPasses(RouterKind kind) {
        FakeRouter router = router(kind, FakeRouter.Timing.asReleased().withDiscoveryLag(Duration.ofMillis(1500)));

        delete("b");

        await().during(Duration.ofMillis(700)).atMost(Duration.ofSeconds(1)).until(() -> router.selects("b"));
        await().atMost(QUICK).until(() -> !router.selects("b"));
    }

    // --- answers in each release's shape ---

    @Test
    void llmDPickerPageHasTheReleasedSeriesForEachEndpointItHolds() throws Exception {
        FakeRouter router = router(RouterKind.LLM_D_ROUTER);
        new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send();

        String page = get(router.adminUri(), 200);

        Map<String, Set<String>> released = seriesLabels(fixture("llm-d-router/epp-metrics-v0.10.0.txt"));
        assertThat(seriesLabels(page)).containsAllEntriesOf(released);
        assertThat(page)
                .contains(
                        "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"a-rank-0\",name=\"pool\"} 0",
                        "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"b-rank-0\",name=\"pool\"} 0",
                        "inference_pool_per_pod_queue_size{model_server_pod=\"a-rank-0\",name=\"pool\"} 0",
                        "llm_d_epp_scheduler_attempts_total{endpoint_name=\"a\",namespace=\"sim\",port=\"8000\",status=\"success\",target_model_name=\"m\"} 1",
                        "inference_extension_scheduler_attempts_total{namespace=\"sim\",pod_name=\"a\",port=\"8000\",status=\"success\",target_model_name=\"m\"} 1");
        assertThat(page).doesNotContain("llm_d_router_epp_");
    }

    @Test
    void vllmRouterEnginesAnswerHasTheReleasedFieldsAndItsIds() throws Exception {
        FakeRouter router = router(RouterKind.VLLM_ROUTER);

        JsonNode engines = JSON.readTree(get(router.adminUri(), 200));

        JsonNode released = JSON.readTree(fixture("vllm-router/engines.json"));
        assertThat(engines)
                .hasSize(2)
                .allSatisfy(card -> assertThat(fieldNames(card)).isEqualTo(fieldNames(released.get(0))));
        Set<String> ids = new TreeSet<>();
        engines.forEach(card -> ids.add(card.path("engine_id").asText()));
        assertThat(ids).isEqualTo(new TreeSet<>(List.of(pythonUuid5Dns("a"), pythonUuid5Dns("b"))));
    }

    @Test
    void smgWorkersAnswerHasTheReleasedFields() throws Exception {
        FakeRouter router = router(RouterKind.SGLANG_GATEWAY);

        JsonNode answer = JSON.readTree(get(router.adminUri(), 200));

        JsonNode released = JSON.readTree(fixture("sglang-gateway/workers-discovered.json"));
        assertThat(fieldNames(answer)).isEqualTo(fieldNames(released));
        assertThat(fieldNames(answer.path("stats"))).isEqualTo(fieldNames(released.path("stats")));
        assertThat(answer.path("workers"))
                .hasSize(2)
                .allSatisfy(w -> assertThat(fieldNames(w))
                        .isEqualTo(fieldNames(released.path("workers").get(0))));
        assertThat(answer.path("total").asInt()).isEqualTo(2);
        assertThat(workerUrls(answer.toString()))
                .containsExactlyInAnyOrder(
                        FakeRouter.base(pod("a")).toString(),
                        FakeRouter.base(pod("b")).toString());
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void theAdminPathIsTheOneTheOperatorAsks(RouterKind kind) {
        assertThat(router(kind).adminUri().getPath())
                .isEqualTo(RouterAdmin.of(kind).path());
    }

    /** The operator's own probe reads each fake as it reads the router: what it selects, and what it no longer does. */
    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void theOperatorsProbeReadsWhatTheRouterSelects(RouterKind kind) {
        FakeRouter router = router(kind);
        delete("b");
        await().atMost(QUICK).until(() -> !router.selects("b"));

        assertThat(probe(kind, router, "a").selects()).contains(true);
    }

    @Test
    void aPinnedPodStaysSelectedAfterItLeavesTheSelector() {
        FakeRouter router = router(RouterKind.LLM_D_ROUTER);
        withdrawByLabel("b");
        await().atMost(QUICK).until(() -> !router.selects("b"));

        router.pin("b", true);
        assertThat(router.selects("b")).isTrue();
        router.pin("b", false);
        assertThat(router.selects("b")).isFalse();
    }

    @Test
    void aReportedDispatchIsRecordedAndCountedOnThePickersPage() throws Exception {
        FakeRouter router = router(RouterKind.LLM_D_ROUTER);
        withdrawByLabel("b");
        await().atMost(QUICK).until(() -> !router.selects("b"));
        Instant withdrawnAt = Instant.now();

        router.reportDispatch("b");

        assertThat(router.dispatchesTo("b", withdrawnAt)).hasSize(1);
        assertThat(get(router.adminUri(), 200)).contains("llm_d_epp_scheduler_attempts_total{endpoint_name=\"b\"");
    }

    private Optional<JsonNode> worker(FakeRouter router, String pod) {
        try {
            String url = FakeRouter.base(pod(pod)).toString();
            for (JsonNode w : JSON.readTree(get(router.adminUri(), 200)).path("workers")) {
                if (w.path("url").asText().equals(url)) {
                    return Optional.of(w);
                }
            }
            return Optional.empty();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private String workerIdOf(FakeRouter router, String pod) {
        return worker(router, pod).orElseThrow().path("id").asText();
    }

    private static List<String> workerUrls(String body) throws Exception {
        List<String> urls = new ArrayList<>();
        JSON.readTree(body).path("workers").forEach(w -> urls.add(w.path("url").asText()));
        return urls;
    }

    private static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new TreeSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static final Pattern SAMPLE =
            Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)\\{([^}]*)\\}", Pattern.MULTILINE);
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");

    /** Each series name with the label names its samples carry. */
    private static Map<String, Set<String>> seriesLabels(String page) {
        Map<String, Set<String>> out = new HashMap<>();
        Matcher sample = SAMPLE.matcher(page);
        while (sample.find()) {
            Set<String> labels = new TreeSet<>();
            LABEL.matcher(sample.group(2)).results().forEach(m -> labels.add(m.group(1)));
            out.put(sample.group(1), labels);
        }
        return out;
    }

    /** The id vLLM's router gives the engine of this Pod, computed by Python's own uuid module. */
    private static String pythonUuid5Dns(String pod) throws Exception {
        Process python = new ProcessBuilder(
                        "/usr/bin/python3",
                        "-c",
                        "import sys, uuid; print(uuid.uuid5(uuid.NAMESPACE_DNS, sys.argv[1]))",
                        pod)
                .redirectErrorStream(true)
                .start();
        String out = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(python.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return out;
    }
}
