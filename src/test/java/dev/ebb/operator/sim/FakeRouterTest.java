package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterAdmin;
import dev.ebb.operator.route.HttpRouterProbe;
import dev.ebb.operator.route.RouterAnswers;
import dev.ebb.operator.route.RouterView;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

@EnableKubernetesMockClient(crud = true)
class FakeRouterTest {
    static final String NS = "sim";
    KubernetesClient client;
    private SimWorld world;
    private FakeRouter router;
    private volatile URI routerAdmin;
    private final HttpRouterProbe operatorProbe = new HttpRouterProbe((routerPod, kind) -> Optional.of(routerAdmin));

    @BeforeEach
    void start() {
        world = new SimWorld(client);
        router = new FakeRouter(client, NS, Map.of("app", "x"), Map.of("app", "x", "serving", "true"));
        for (String name : new String[] {"a", "b"}) {
            Pod pod = new PodBuilder(SimKubeletTest.enginePod(name, 15L, null))
                    .editMetadata().addToLabels("app", "x").addToLabels("serving", "true").endMetadata().build();
            client.resource(pod).create();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> router.selected().size() == 2);
    }

    @AfterEach
    void stop() {
        router.close();
        world.close();
    }

    @Test
    void spreadsRequestsOverTheReadyPodsAndRecordsEachDispatch() {
        LoadGenerator load = new LoadGenerator(router, 1, 2, Duration.ofMillis(5));
        for (int i = 0; i < 4; i++) {
            assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }

        assertThat(router.dispatches()).extracting(FakeRouter.Dispatch::pod).containsExactly("a", "b", "a", "b");
        assertThat(load.requests()).extracting(LoadGenerator.Request::pod).containsExactly("a", "b", "a", "b");
    }

    @Test
    void dropsAPodOnItsDeletionTimestamp() {
        client.pods().inNamespace(NS).withName("a").delete();

        await().atMost(Duration.ofSeconds(2)).until(() -> !router.selects("a"));
        assertThat(router.selects("b")).isTrue();
    }

    @Test
    void dropsAPodThatLeavesItsSelector() {
        client.pods().inNamespace(NS).withName("b").edit(p -> {
            p.getMetadata().getLabels().put("serving", "false");
            return p;
        });

        await().atMost(Duration.ofSeconds(2)).until(() -> !router.selects("b"));
        Instant after = Instant.now();
        new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send();
        assertThat(router.dispatchesTo("b", after)).isEmpty();
        assertThat(router.dispatchesTo("a", after)).hasSize(1);
    }

    @Test
    void downRouterSelectsNothing() {
        router.setUp(false);

        assertThat(router.selected()).isEmpty();
        assertThat(new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send().outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED);
    }

    private Pod pod(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private void withdraw(String name) {
        client.pods().inNamespace(NS).withName(name).edit(p -> {
            p.getMetadata().getLabels().put("serving", "false");
            return p;
        });
        await().atMost(Duration.ofSeconds(2)).until(() -> !router.selects(name));
    }

    private static String get(URI admin, int expectedStatus) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(admin).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(expectedStatus);
        return response.body();
    }

    /** The Pods, among those created here, that the router's answer names, read as the operator reads that router. */
    private Set<String> podsNamedIn(RouterKind kind, String body) {
        return Stream.of("a", "b").filter(name -> switch (kind) {
            case SGLANG_GATEWAY -> RouterAnswers.sglangWorkers(body).orElseThrow().containsKey(pod(name).getStatus().getPodIP());
            case VLLM_ROUTER -> RouterAnswers.vllmEngines(body).orElseThrow().contains(RouterAnswers.vllmEngineId(name));
            case LLM_D_ROUTER -> RouterAnswers.eppEndpoints(body).orElseThrow().contains(name);
        }).collect(Collectors.toSet());
    }

    /** What the operator's own probe makes of the router's answer about one member. */
    private RouterView probe(RouterKind kind, URI admin, String member) {
        ModelDeployment md = Specs.deployment("md", kind == RouterKind.SGLANG_GATEWAY ? "SGLang" : "vLLM").namespace(NS)
                .router(kind.wireName()).role(Specs.role("s")).build();
        routerAdmin = admin;
        return operatorProbe.view(md, List.of(SimRouterPods.ready(NS, "md-router-0", "127.0.0.1")), List.of(pod(member)));
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void adminAnswerNamesWhatTheRouterSelectsInThatRoutersOwnDialect(RouterKind kind) throws Exception {
        URI admin = router.serveAdmin(kind);
        assertThat(admin.getPath()).isEqualTo(RouterAdmin.of(kind).path());
        assertThat(podsNamedIn(kind, get(admin, 200))).containsExactlyInAnyOrder("a", "b");

        withdraw("b");

        assertThat(podsNamedIn(kind, get(admin, 200))).containsExactly("a");
        assertThat(probe(kind, admin, "b").selects()).contains(false);
        assertThat(probe(kind, admin, "a").selects()).contains(true);
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void downRouterAnswers503AndTheOperatorCannotTell(RouterKind kind) throws Exception {
        URI admin = router.serveAdmin(kind);

        router.setUp(false);

        get(admin, 503);
        assertThat(probe(kind, admin, "a")).isEqualTo(RouterView.unavailable());
        router.setUp(true);
        assertThat(probe(kind, admin, "a").selects()).contains(true);
    }

    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void pinnedPodStaysSelectedAndInTheAnswerAfterItLeavesTheSelector(RouterKind kind) throws Exception {
        URI admin = router.serveAdmin(kind);
        withdraw("b");

        router.pin("b", true);

        assertThat(router.selects("b")).isTrue();
        assertThat(podsNamedIn(kind, get(admin, 200))).containsExactlyInAnyOrder("a", "b");
        assertThat(probe(kind, admin, "b").selects()).contains(true);
        router.pin("b", false);
        assertThat(router.selects("b")).isFalse();
        assertThat(probe(kind, admin, "b").selects()).contains(false);
    }

    /** Only llm-d's picker reports dispatches per endpoint; the other routers' answers hold no such record. */
    @ParameterizedTest
    @EnumSource(RouterKind.class)
    void reportedDispatchToAWithdrawnPodIsRecordedAndOnlyThePickerReportsIt(RouterKind kind) throws Exception {
        URI admin = router.serveAdmin(kind);
        withdraw("b");
        Instant withdrawnAt = Instant.now();
        Map<String, Double> before = probe(kind, admin, "b").dispatches();

        router.reportDispatch("b");

        assertThat(router.dispatchesTo("b", withdrawnAt)).hasSize(1);
        assertThat(router.selects("b")).isFalse();
        RouterView view = probe(kind, admin, "b");
        assertThat(view.selects()).contains(false);
        if (kind == RouterKind.LLM_D_ROUTER) {
            assertThat(RouterAnswers.eppAttempts(get(admin, 200)).orElseThrow()).containsEntry("b", 1.0);
            // each router Pod's counts are its own, so they come keyed by the Pod that counted them
            assertThat(before).containsEntry("md-router-0/b", 0.0);
            assertThat(view.dispatches()).containsEntry("md-router-0/b", 1.0);
        } else {
            assertThat(view.dispatches()).isEmpty();
        }
    }
}
