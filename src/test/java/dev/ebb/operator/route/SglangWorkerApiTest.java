package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimRouterPods;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The removal of a withdrawn replica's workers from SGLang's gateway, against local servers that answer as smg v1.9.0
 * does (model_gateway/src/worker/service.rs: the GET /workers list, 202 with DeleteWorkerResult's body once a removal
 * is queued, 404 with WorkerServiceError's body for an id it does not know), and against servers that answer what no
 * gateway should: malformed, oversized, slow, refusing.
 */
class SglangWorkerApiTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    /** Far above the two 2 s rounds, so only a slip of the bound itself fails the timing checks. */
    private static final Duration BOUND_WITH_MARGIN = Duration.ofSeconds(8);

    private static final String TARGET_IP = "10.0.0.2";
    private static final String TARGET_ID = "5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21";
    private static final String KEPT_ID = "0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90";
    /** The target as the operator renders it: the engine container serving on its role's port; ready. */
    private static final Pod TARGET = new PodBuilder()
            .withNewMetadata()
            .withName("qwen-server-r1-m0")
            .addToLabels(Labels.ROLE_KIND, "Server")
            .addToLabels(Labels.MEMBER_INDEX, Labels.LEADER_INDEX)
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("main")
            .addNewPort()
            .withName("http")
            .withContainerPort(8000)
            .endPort()
            .endContainer()
            .endSpec()
            .withNewStatus()
            .withPodIP(TARGET_IP)
            .addNewCondition()
            .withType("Ready")
            .withStatus("True")
            .endCondition()
            .endStatus()
            .build();

    private final List<Gateway> gateways = new ArrayList<>();

    @AfterEach
    void stop() {
        gateways.forEach(g -> g.server.stop(0));
    }

    /** One gateway Pod: its registry of workers, what it was asked, and how it answers. */
    private final class Gateway {
        final HttpServer server;
        final Map<String, String> workers = new LinkedHashMap<>();
        final List<String> requests = new CopyOnWriteArrayList<>();
        final List<String> posted = new CopyOnWriteArrayList<>();
        String listOverride;
        int listStatus = 200;
        int deleteStatus = 0;
        Duration delay = Duration.ZERO;

        Gateway() throws IOException {
            server = HttpServer.create(new InetSocketAddress(ADDRESSES.next(), 0), 0);
            server.createContext("/workers", this::handle);
            // one thread per exchange, so that a slow answer holds up none of the others
            server.setExecutor(Executors.newCachedThreadPool(task -> {
                Thread thread = new Thread(task, "gateway");
                thread.setDaemon(true);
                return thread;
            }));
            server.start();
            gateways.add(this);
        }

        Gateway with(String id, String url) {
            workers.put(id, url);
            return this;
        }

        URI address() {
            return URI.create("http://" + server.getAddress().getHostString() + ":"
                    + server.getAddress().getPort() + "/workers");
        }

        private void handle(HttpExchange exchange) throws IOException {
            requests.add(
                    exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath());
            try {
                Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (exchange.getRequestMethod().equals("GET")) {
                answer(exchange, listStatus, listOverride != null ? listOverride : list());
                return;
            }
            if (exchange.getRequestMethod().equals("POST")) {
                String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                posted.add(body);
                String url = new ObjectMapper().readTree(body).path("url").asText();
                if (workers.containsValue(url)) {
                    answer(
                            exchange,
                            409,
                            "{\"error\":\"Worker already exists at URL '" + url
                                    + "'\",\"code\":\"WORKER_ALREADY_EXISTS\"}");
                    return;
                }
                String id = UUID.randomUUID().toString();
                workers.put(id, url);
                answer(
                        exchange,
                        202,
                        "{\"status\":\"accepted\",\"worker_id\":\"" + id + "\",\"url\":\"" + url
                                + "\",\"location\":\"/workers/" + id
                                + "\",\"message\":\"Worker addition queued for background processing\"}");
                return;
            }
            String id = exchange.getRequestURI().getPath().substring("/workers/".length());
            if (deleteStatus != 0) {
                answer(exchange, deleteStatus, "{\"error\":\"refused\",\"code\":\"INTERNAL_SERVER_ERROR\"}");
            } else if (workers.remove(id) != null) {
                answer(
                        exchange,
                        202,
                        "{\"status\":\"accepted\",\"worker_id\":\"" + id
                                + "\",\"message\":\"Worker removal queued for background processing\"}");
            } else {
                answer(exchange, 404, "{\"error\":\"Worker " + id + " not found\",\"code\":\"WORKER_NOT_FOUND\"}");
            }
        }

        /** The body ListWorkersResult serializes, one regular worker per entry. */
        private String list() {
            return "{\"workers\":["
                    + workers.entrySet().stream()
                            .map(w -> "{\"id\":\"" + w.getKey() + "\",\"url\":\"" + w.getValue()
                                    + "\",\"worker_type\":\"regular\",\"connection_mode\":\"http\",\"runtime_type\":\"sglang\",\"provider\":null,"
                                    + "\"priority\":50,\"cost\":1.0,\"max_connection_attempts\":20,\"is_healthy\":true,\"status\":\"ready\",\"load\":0,"
                                    + "\"job_status\":null}")
                            .collect(Collectors.joining(","))
                    + "],\"total\":" + workers.size()
                    + ",\"stats\":{\"prefill_count\":0,\"decode_count\":0,\"regular_count\":" + workers.size() + "}}";
        }

        private void answer(HttpExchange exchange, int status, String body) throws IOException {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            try (var out = exchange.getResponseBody()) {
                out.write(bytes);
            } catch (IOException e) {
                // a reader that gave up on a slow or long answer closed the connection
            }
        }
    }

    private record Timed(List<SglangWorkerApi.Asked> removals, Duration took) {}

    private static List<SglangWorkerApi.Asked> restore(Pod member, Gateway... pods) {
        Map<String, URI> addresses = new HashMap<>();
        List<Pod> routerPods = new ArrayList<>();
        for (int i = 0; i < pods.length; i++) {
            Pod routerPod = SimRouterPods.ready(
                    "team-a", "qwen-router-" + i, pods[i].address().getHost());
            routerPods.add(routerPod);
            addresses.put(routerPod.getMetadata().getName(), pods[i].address());
        }
        return new SglangWorkerApi(
                        (pod, kind) -> Optional.ofNullable(
                                addresses.get(pod.getMetadata().getName())),
                        HttpClient.newHttpClient())
                .restore(routerPods, List.of(member));
    }

    private static Timed remove(List<Pod> routerPods, Map<String, URI> addresses) {
        SglangWorkerApi removal = new SglangWorkerApi(
                (pod, kind) ->
                        Optional.ofNullable(addresses.get(pod.getMetadata().getName())),
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build());
        long start = System.nanoTime();
        List<SglangWorkerApi.Asked> removals = removal.remove(routerPods, List.of(TARGET));
        return new Timed(removals, Duration.ofNanos(System.nanoTime() - start));
    }

    private static Timed remove(Gateway... pods) {
        Map<String, URI> addresses = new HashMap<>();
        List<Pod> routerPods = new ArrayList<>();
        for (int i = 0; i < pods.length; i++) {
            Pod routerPod = SimRouterPods.ready(
                    "team-a", "qwen-router-" + i, pods[i].address().getHost());
            routerPods.add(routerPod);
            addresses.put(routerPod.getMetadata().getName(), pods[i].address());
        }
        return remove(routerPods, addresses);
    }

    @Test
    void onlyTheTargetsWorkerIsRemovedAndTheGatewayQueuesIt() throws IOException {
        Gateway gateway =
                new Gateway().with(KEPT_ID, "http://10.0.0.1:8000").with(TARGET_ID, "http://" + TARGET_IP + ":8000");

        Timed removed = remove(gateway);

        assertThat(removed.removals())
                .containsExactly(new SglangWorkerApi.Asked("qwen-router-0", TARGET_ID, SglangWorkerApi.Outcome.QUEUED));
        assertThat(gateway.requests).containsExactly("GET /workers", "DELETE /workers/" + TARGET_ID);
        assertThat(gateway.workers).containsOnlyKeys(KEPT_ID);
    }

    @Test
    void eachGatewayPodRemovesTheIdsOfItsOwnList() throws IOException {
        String otherId = "9a1e3c5b-7d2f-4b6e-8c0a-2e4f6a8c0b13";
        Gateway first = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        Gateway second = new Gateway().with(otherId, TARGET_IP + ":8000");
        Gateway dropped = new Gateway().with(KEPT_ID, "http://10.0.0.1:8000");

        remove(first, second, dropped);

        assertThat(first.requests).containsExactly("GET /workers", "DELETE /workers/" + TARGET_ID);
        assertThat(second.requests).containsExactly("GET /workers", "DELETE /workers/" + otherId);
        assertThat(dropped.requests).containsExactly("GET /workers");
    }

    @Test
    void aListThatCannotBeReadRemovesNothingThere() throws IOException {
        Gateway malformed = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        malformed.listOverride = "{\"workers\":[{\"id\":\"" + TARGET_ID + "\",\"url\":\"http://" + TARGET_IP;
        Gateway oversized = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        oversized.listOverride = "{\"workers\":[{\"id\":\"" + TARGET_ID + "\",\"url\":\"http://" + TARGET_IP
                + ":8000\"}]" + " ".repeat(HttpRouterProbe.MAX_ANSWER_BYTES) + "}";
        Gateway locked = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        locked.listStatus = 401;

        Timed removed = remove(malformed, oversized, locked);

        assertThat(removed.removals()).isEmpty();
        assertThat(List.of(malformed, oversized, locked))
                .allSatisfy(g -> assertThat(g.requests).containsExactly("GET /workers"));
        assertThat(removed.took()).isLessThan(BOUND_WITH_MARGIN);
    }

    @Test
    void aSlowListRemovesNothingAndTheCallReturnsWithinTheBound() throws IOException {
        Gateway slow = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        slow.delay = Duration.ofSeconds(20);

        Timed removed = remove(slow);

        assertThat(removed.removals()).isEmpty();
        assertThat(removed.took()).isLessThan(BOUND_WITH_MARGIN);
    }

    @Test
    void aRemovalRefusedUnknownOrUnansweredIsReportedSoAndNeverAsQueued() throws IOException {
        Gateway refusing = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        refusing.deleteStatus = 500;
        Gateway gone = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        gone.deleteStatus = 404;
        Gateway listsOnly = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        // its list comes at once; every answer after the first is too late
        listsOnly.server.removeContext("/workers");
        listsOnly.server.createContext("/workers", exchange -> {
            if (exchange.getRequestMethod().equals("DELETE")) {
                listsOnly.delay = Duration.ofSeconds(20);
            }
            listsOnly.handle(exchange);
        });

        Timed removed = remove(refusing, gone, listsOnly);

        assertThat(removed.removals())
                .extracting(SglangWorkerApi.Asked::outcome)
                .containsExactly(
                        SglangWorkerApi.Outcome.REFUSED,
                        SglangWorkerApi.Outcome.NOT_FOUND,
                        SglangWorkerApi.Outcome.UNANSWERED);
        assertThat(removed.took()).isLessThan(BOUND_WITH_MARGIN);
    }

    @Test
    void aRouterPodNotReadyOrWithoutAnAddressIsNotAskedAndNothingIsAskedWithoutATargetAddress() throws IOException {
        Gateway gateway = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        Pod notReady = new PodBuilder(SimRouterPods.ready(
                        "team-a", "qwen-router-0", gateway.address().getHost()))
                .editStatus()
                .editFirstCondition()
                .withStatus("False")
                .endCondition()
                .endStatus()
                .build();

        assertThat(remove(List.of(notReady), Map.of("qwen-router-0", gateway.address()))
                        .removals())
                .isEmpty();
        assertThat(remove(List.of(SimRouterPods.ready("team-a", "qwen-router-0", "10.9.9.9")), Map.of())
                        .removals())
                .isEmpty();
        SglangWorkerApi removal =
                new SglangWorkerApi((pod, kind) -> Optional.of(gateway.address()), HttpClient.newHttpClient());
        assertThat(removal.remove(
                        List.of(SimRouterPods.ready(
                                "team-a", "qwen-router-0", gateway.address().getHost())),
                        List.of(new PodBuilder()
                                .withNewMetadata()
                                .withName("unscheduled")
                                .endMetadata()
                                .build())))
                .isEmpty();
        assertThat(gateway.requests).isEmpty();
    }

    @Test
    void aRestoredMemberIsAddedBackWhereItIsNotListedAsTheGatewayRegistersIt() throws IOException {
        Gateway forgot = new Gateway().with(KEPT_ID, "http://10.0.0.1:8000");
        Gateway kept =
                new Gateway().with(KEPT_ID, "http://10.0.0.1:8000").with(TARGET_ID, "http://" + TARGET_IP + ":8000");

        List<SglangWorkerApi.Asked> asked = restore(TARGET, forgot, kept);

        assertThat(asked)
                .containsExactly(new SglangWorkerApi.Asked(
                        "qwen-router-0", "http://" + TARGET_IP + ":8000", SglangWorkerApi.Outcome.QUEUED));
        assertThat(forgot.posted).containsExactly("{\"url\":\"http://" + TARGET_IP + ":8000\"}");
        assertThat(forgot.workers).containsValue("http://" + TARGET_IP + ":8000");
        assertThat(kept.requests).containsExactly("GET /workers");
    }

    @Test
    void aWorkerAddedMeanwhileByTheGatewaysOwnDiscoveryIsAlreadyThere() throws IOException {
        Gateway racing = new Gateway().with(KEPT_ID, "http://10.0.0.1:8000");
        racing.listOverride =
                "{\"workers\":[],\"total\":0,\"stats\":{\"prefill_count\":0,\"decode_count\":0,\"regular_count\":0}}";
        racing.workers.put(TARGET_ID, "http://" + TARGET_IP + ":8000");

        assertThat(restore(TARGET, racing))
                .extracting(SglangWorkerApi.Asked::outcome)
                .containsExactly(SglangWorkerApi.Outcome.ALREADY_THERE);
    }

    @Test
    void aMemberNotReadyWithoutAnEnginePortAFollowerOrOfASplitIsNotAddedBack() throws IOException {
        Gateway gateway = new Gateway().with(KEPT_ID, "http://10.0.0.1:8000");
        Pod notReady = new PodBuilder(TARGET)
                .editStatus()
                .editFirstCondition()
                .withStatus("False")
                .endCondition()
                .endStatus()
                .build();
        Pod noPort = new PodBuilder(TARGET)
                .editSpec()
                .editFirstContainer()
                .withPorts(List.of())
                .endContainer()
                .endSpec()
                .build();
        Pod prefill = new PodBuilder(TARGET)
                .editMetadata()
                .addToLabels(Labels.ROLE_KIND, "Prefill")
                .endMetadata()
                .build();
        // the gateway's selector takes only a replica's leader: a follower serves no requests of its own
        Pod follower = new PodBuilder(TARGET)
                .editMetadata()
                .withName("qwen-server-r1-m1")
                .addToLabels(Labels.MEMBER_INDEX, "1")
                .endMetadata()
                .build();

        assertThat(restore(notReady, gateway)).isEmpty();
        assertThat(restore(noPort, gateway)).isEmpty();
        assertThat(restore(prefill, gateway)).isEmpty();
        assertThat(restore(follower, gateway)).isEmpty();
        assertThat(gateway.requests).isEmpty();
    }
    /**
     * The per-pass listing: a gateway Pod that has never run holds no list yet and is left out; one running but not
     * ready is named, unread; a ready one is read.
     */
    @Test
    void theListingReadsReadyGatewayPodsNamesOnesNotReadyAndLeavesOutOnesThatNeverRan() throws IOException {
        Gateway gateway = new Gateway().with(TARGET_ID, "http://" + TARGET_IP + ":8000");
        Pod ready =
                SimRouterPods.ready("team-a", "qwen-router-0", gateway.address().getHost());
        Pod notReady = new PodBuilder(SimRouterPods.ready("team-a", "qwen-router-1", "10.0.0.9"))
                .editStatus()
                .editFirstCondition()
                .withStatus("False")
                .endCondition()
                .endStatus()
                .build();
        Pod pending = new PodBuilder()
                .withNewMetadata()
                .withName("qwen-router-2")
                .endMetadata()
                .withNewStatus()
                .withPhase("Pending")
                .endStatus()
                .build();
        SglangWorkerApi api =
                new SglangWorkerApi((pod, kind) -> Optional.of(gateway.address()), HttpClient.newHttpClient());

        List<GatewayMembership.Listing> listings = api.list(List.of(pending, notReady, ready));

        assertThat(listings)
                .extracting(GatewayMembership.Listing::gatewayPod)
                .containsExactly("qwen-router-0", "qwen-router-1");
        assertThat(listings.get(0).workers())
                .hasValueSatisfying(workers -> assertThat(workers)
                        .extracting(RouterAnswers.SglangWorker::id)
                        .containsExactly(TARGET_ID));
        assertThat(listings.get(1).workers()).isEmpty();
    }
}
