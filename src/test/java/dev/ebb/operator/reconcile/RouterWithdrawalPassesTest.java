package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.lifecycle.LeaseGuard;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterAdmin;
import dev.ebb.operator.retire.Budgets;
import dev.ebb.operator.retire.NextRetirement;
import dev.ebb.operator.route.HttpRouterProbe;
import dev.ebb.operator.route.RouterAnswers;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimRouterPods;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The retirement's passes against routers that lag as the released ones do, each router Pod a local server answering
 * in its release's words: SGLang's gateway, which would keep a withdrawn Pod until its next relist, is told to drop
 * it, and to take it back when the replica is kept after all; vLLM's router, one of whose replicas missed the
 * withdrawal, holds the retirement until that replica drops it.
 */
class RouterWithdrawalPassesTest {
    private static final NextRetirement.RetryPolicy RETRY =
            new NextRetirement.RetryPolicy(java.util.Optional.empty(), java.time.Duration.ofMinutes(5), 1, 0);
    private static final String NS = "passes";
    private static final String KEPT = "qwen-server-r0-m0";
    private static final String TARGET = "qwen-server-r1-m0";
    private static final String KEPT_IP = "10.0.0.1";
    private static final String TARGET_IP = "10.0.0.2";
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();

    private KubernetesMockServer server;
    private KubernetesClient client;
    private final List<HttpServer> routers = new ArrayList<>();
    private final Map<String, URI> routerAddresses = new HashMap<>();
    private final List<Pod> routerPods = new ArrayList<>();
    private Instant now = T0;

    @BeforeEach
    void start() {
        server = SimApiServer.startServer();
        client = server.createClient();
        DesiredDeployment desired =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        for (int ordinal = 0; ordinal < 2; ordinal++) {
            for (Pod pod : ObservedPods.replica(desired, "server", ordinal, "h", true)) {
                client.pods()
                        .inNamespace(NS)
                        .resource(new PodBuilder(pod)
                                .editMetadata()
                                .withNamespace(NS)
                                .endMetadata()
                                .editStatus()
                                .withPodIP("10.0.0." + (ordinal + 1))
                                .endStatus()
                                .build())
                        .create();
            }
        }
    }

    @AfterEach
    void stop() {
        routers.forEach(r -> r.stop(0));
        client.close();
        server.destroy();
    }

    /** One router Pod answering at its own address; its answers are whatever the handler gives. */
    private void routerPod(RouterKind kind, Handler handler) throws IOException {
        HttpServer router = HttpServer.create(new InetSocketAddress(ADDRESSES.next(), 0), 0);
        router.createContext(RouterAdmin.of(kind).path(), exchange -> {
            Answer answer = handler.answer(
                    exchange.getRequestMethod(),
                    exchange.getRequestURI().getPath(),
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            reply(exchange, answer.status(), answer.body());
        });
        router.start();
        routers.add(router);
        String name = "qwen-router-" + routerPods.size();
        routerPods.add(SimRouterPods.ready(NS, name, router.getAddress().getHostString()));
        routerAddresses.put(
                name,
                URI.create("http://" + router.getAddress().getHostString() + ":"
                        + router.getAddress().getPort() + RouterAdmin.of(kind).path()));
    }

    private interface Handler {
        Answer answer(String method, String path, String body);
    }

    private record Answer(int status, String body) {}

    private static void reply(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        try (var out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private RetirementPasses runner() {
        return RetirementPasses.unread(
                client,
                new HttpRouterProbe((routerPod, kind) -> Optional.ofNullable(
                        routerAddresses.get(routerPod.getMetadata().getName()))),
                LeaseGuard.NOT_ELECTING);
    }

    /** The role's Service's slice, which already dropped the target: only the router is in question. */
    private static EndpointSlice sliceListingKept() {
        return new EndpointSliceBuilder()
                .withNewMetadata()
                .withName("qwen-server-abc")
                .withNamespace(NS)
                .addToLabels(Labels.SERVICE_NAME, Names.roleService("qwen", "server"))
                .endMetadata()
                .withAddressType("IPv4")
                .addNewEndpoint()
                .addToAddresses(KEPT_IP)
                .withNewTargetRef()
                .withKind("Pod")
                .withName(KEPT)
                .endTargetRef()
                .endEndpoint()
                .build();
    }

    /** One reconcile's worth: plan, persist the record, carry out; a second later. */
    private RetirementStatus pass(RetirementPasses runner, ModelDeployment md) {
        return pass(
                runner,
                md,
                List.of(new NextRetirement.Candidate(
                        "server", 1, NextRetirement.Purpose.REDUCTION, "", Budgets.DRAINING, false)));
    }

    /** @param candidates what the spec asks to retire now: none once it is scaled back up */
    private RetirementStatus pass(
            RetirementPasses runner, ModelDeployment md, List<NextRetirement.Candidate> candidates) {
        List<Pod> pods = client.pods().inNamespace(NS).list().getItems();
        RetirementRunner.Pass pass = runner.runner()
                .plan(
                        md,
                        Inventory.of(pods),
                        pods,
                        candidates,
                        List.of(),
                        RETRY,
                        List.of(sliceListingKept()),
                        routerPods,
                        now);
        md.setStatus(new ModelDeploymentStatus(
                null, null, null, List.of(), null, null, pass.statuses(), List.of(), List.of()));
        runner.actions().carryOut(md, pass, pods, routerPods);
        now = now.plusSeconds(1);
        return pass.statuses().get(0);
    }

    private String targetLabel() {
        return client.pods()
                .inNamespace(NS)
                .withName(TARGET)
                .get()
                .getMetadata()
                .getLabels()
                .get(Labels.SERVING);
    }

    /** A gateway Pod as smg 1.9.0 keeps it: a registry its relist would prune only a minute later, and a worker API. */
    private static class Gateway implements Handler {
        final Map<String, String> workers = new LinkedHashMap<>();
        final List<String> deletes = new CopyOnWriteArrayList<>();
        final List<String> posted = new CopyOnWriteArrayList<>();

        Gateway(String keptId, String targetId) {
            workers.put(keptId, "http://" + KEPT_IP + ":8000");
            workers.put(targetId, "http://" + TARGET_IP + ":8000");
        }

        @Override
        public synchronized Answer answer(String method, String path, String body) {
            if (method.equals("POST")) {
                posted.add(body);
                String url = body.replaceAll(".*\"url\":\"([^\"]*)\".*", "$1");
                String id = UUID.nameUUIDFromBytes(url.getBytes(StandardCharsets.UTF_8))
                        .toString();
                workers.put(id, url);
                return new Answer(
                        202,
                        "{\"status\":\"accepted\",\"worker_id\":\"" + id + "\",\"url\":\"" + url
                                + "\",\"location\":\"/workers/" + id
                                + "\",\"message\":\"Worker addition queued for background processing\"}");
            }
            if (method.equals("DELETE")) {
                String id = path.substring("/workers/".length());
                deletes.add(id);
                return workers.remove(id) != null
                        ? new Answer(
                                202,
                                "{\"status\":\"accepted\",\"worker_id\":\"" + id
                                        + "\",\"message\":\"Worker removal queued for background processing\"}")
                        : new Answer(404, "{\"error\":\"Worker " + id + " not found\",\"code\":\"WORKER_NOT_FOUND\"}");
            }
            return new Answer(
                    200,
                    "{\"workers\":["
                            + workers.entrySet().stream()
                                    .map(
                                            w -> "{\"id\":\"" + w.getKey() + "\",\"url\":\"" + w.getValue()
                                                    + "\",\"worker_type\":\"regular\",\"connection_mode\":\"http\","
                                                    + "\"runtime_type\":\"sglang\",\"provider\":null,\"priority\":50,\"cost\":1.0,\"max_connection_attempts\":20,"
                                                    + "\"is_healthy\":true,\"status\":\"ready\",\"load\":0,\"job_status\":null}")
                                    .collect(Collectors.joining(","))
                            + "],\"total\":" + workers.size() + ",\"stats\":{\"prefill_count\":0,\"decode_count\":0,"
                            + "\"regular_count\":" + workers.size() + "}}");
        }
    }

    @Test
    void theGatewayIsToldToDropTheTargetOnlyAfterItsLabelIsWrittenAndTheWithdrawalIsConfirmedFromItsLists()
            throws IOException {
        Gateway first = new Gateway("0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90", "5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21");
        Gateway second = new Gateway("9a1e3c5b-7d2f-4b6e-8c0a-2e4f6a8c0b13", "c4e6a8b0-1d3f-4a5c-9e7b-3f5a7c9e1b24");
        routerPod(RouterKind.SGLANG_GATEWAY, first);
        routerPod(RouterKind.SGLANG_GATEWAY, second);
        ModelDeployment md = deployment("qwen", "SGLang")
                .namespace(NS)
                .router(RouterKind.SGLANG_GATEWAY.wireName())
                .role(role("server").replicas(1))
                .build();
        RetirementPasses runner = runner();

        RetirementStatus begun = pass(runner, md);
        assertThat(begun.state()).isEqualTo("Withdrawing");
        assertThat(targetLabel()).isEqualTo(Labels.SERVING_NO);
        assertThat(first.deletes).isEmpty();

        RetirementStatus held = pass(runner, md);
        assertThat(held.state()).isEqualTo("Withdrawing");
        assertThat(held.reason()).isEqualTo("RouterStillSelects");
        assertThat(first.deletes).containsExactly("5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21");
        assertThat(second.deletes).containsExactly("c4e6a8b0-1d3f-4a5c-9e7b-3f5a7c9e1b24");
        assertThat(first.workers).containsOnlyKeys("0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90");

        assertThat(pass(runner, md).state()).isEqualTo("Draining");
        assertThat(first.deletes).hasSize(1);
    }

    @Test
    void aReplicaKeptAfterTheGatewayDroppedItIsAddedBackForTheGatewayWouldNotTakeItBackByItself() throws IOException {
        Gateway gateway = new Gateway("0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90", "5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21");
        routerPod(RouterKind.SGLANG_GATEWAY, gateway);
        ModelDeployment md = deployment("qwen", "SGLang")
                .namespace(NS)
                .router(RouterKind.SGLANG_GATEWAY.wireName())
                .role(role("server").replicas(1))
                .build();
        RetirementPasses runner = runner();
        pass(runner, md);
        pass(runner, md);
        assertThat(gateway.workers).doesNotContainValue("http://" + TARGET_IP + ":8000");

        RetirementStatus kept = pass(runner, md, List.of());

        assertThat(kept.state()).isEqualTo("Aborted");
        assertThat(targetLabel()).isEqualTo(Labels.SERVING_YES);
        assertThat(gateway.posted).containsExactly("{\"url\":\"http://" + TARGET_IP + ":8000\"}");
        assertThat(gateway.workers).containsValue("http://" + TARGET_IP + ":8000");
    }

    @Test
    void aGatewayThatRefusesTheRemovalKeepsTheRetirementHeldAndIsAskedAgain() throws IOException {
        Gateway refusing = new Gateway("0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90", "5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21") {
            @Override
            public synchronized Answer answer(String method, String path, String body) {
                if (method.equals("DELETE")) {
                    deletes.add(path);
                    return new Answer(401, "{\"error\":\"unauthorized\"}");
                }
                return super.answer(method, path, body);
            }
        };
        routerPod(RouterKind.SGLANG_GATEWAY, refusing);
        ModelDeployment md = deployment("qwen", "SGLang")
                .namespace(NS)
                .router(RouterKind.SGLANG_GATEWAY.wireName())
                .role(role("server").replicas(1))
                .build();
        RetirementPasses runner = runner();

        pass(runner, md);
        RetirementStatus held = pass(runner, md);
        RetirementStatus stillHeld = pass(runner, md);

        assertThat(held.reason()).isEqualTo("RouterStillSelects");
        assertThat(stillHeld.state()).isEqualTo("Withdrawing");
        assertThat(stillHeld.reason()).isEqualTo("RouterStillSelects");
        assertThat(refusing.deletes).hasSize(2);
    }

    @Test
    void oneVllmRouterReplicaStillListingTheWithdrawnEngineHoldsTheRetirementWhileTheOthersDroppedIt()
            throws IOException {
        // vllm-stack-0.1.12 main_router.py get_engine_instances: one card per engine the replica still holds
        String engines = "[{\"engine_id\":\"%s\",\"serving_models\":[\"Qwen/Qwen3-8B\"],\"created\":1764490000}%s]";
        String kept = String.format(engines, RouterAnswers.vllmEngineId(KEPT), "");
        String stale = String.format(
                engines,
                RouterAnswers.vllmEngineId(KEPT),
                ",{\"engine_id\":\"" + RouterAnswers.vllmEngineId(TARGET)
                        + "\",\"serving_models\":[\"Qwen/Qwen3-8B\"],\"created\":1764490012}");
        boolean[] relisted = {false};
        routerPod(RouterKind.VLLM_ROUTER, (method, path, body) -> new Answer(200, kept));
        routerPod(RouterKind.VLLM_ROUTER, (method, path, body) -> new Answer(200, relisted[0] ? kept : stale));
        routerPod(RouterKind.VLLM_ROUTER, (method, path, body) -> new Answer(200, kept));
        ModelDeployment md = deployment("qwen", "vLLM")
                .namespace(NS)
                .router(RouterKind.VLLM_ROUTER.wireName())
                .role(role("server").replicas(1))
                .build();
        RetirementPasses runner = runner();

        pass(runner, md);
        RetirementStatus held = pass(runner, md);
        RetirementStatus stillHeld = pass(runner, md);
        relisted[0] = true;
        RetirementStatus released = pass(runner, md);

        assertThat(held.reason()).isEqualTo("RouterStillSelects");
        assertThat(stillHeld.state()).isEqualTo("Withdrawing");
        assertThat(released.state()).isEqualTo("Draining");
    }
}
