package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.observe.Metrics;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.retire.Budgets;
import dev.ebb.operator.sim.DeletionWatch;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.KubeProxyService;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimClock;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import dev.ebb.operator.sim.Termination;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The retirement protocol end to end in the test world: the operator, the simulated kubelet and endpoints, fake
 * engines and routers, and member reads through the real read script. Budgets are reached by moving the operator's
 * clock, never by waiting minutes.
 */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class RetirementIT {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private static final Duration CONVERGE = Duration.ofSeconds(30);

    @Inject
    KubernetesClient client;

    @Inject
    SimClock clock;

    @Inject
    SimRouterAddress routers;

    @Inject
    MeterRegistry registry;

    private SimWorld world;
    private FakeRouter router;
    private final List<FakeRouter> replicas = new ArrayList<>();
    private String ns;

    @BeforeEach
    void start() {
        world = new SimWorld(client);
        ns = "retire-" + NAMESPACES.incrementAndGet();
    }

    @AfterEach
    void stop() {
        clock.reset();
        routers.remove(ns, "qwen");
        if (router != null) {
            router.close();
        }
        replicas.forEach(FakeRouter::close);
        client.resources(ModelDeployment.class).inNamespace(ns).withName("qwen").delete();
        world.close();
    }

    /** A deployment with a router the operator can ask, and the fake router itself in front of its serving Pods. */
    private void deployRouted(Specs.Deployment spec) {
        deployRouted(spec, RouterKind.LLM_D_ROUTER);
    }

    private void deployRouted(Specs.Deployment spec, RouterKind kind) {
        router = FakeRouter.inFrontOf(client, ns, "qwen", kind);
        routers.put(ns, "qwen", kind, router);
        client.resource(spec.router(kind.wireName()).namespace(ns).build()).create();
    }

    /** A deployment whose router runs as several replicas, each a fake router with its own view of the Pods. */
    private void deployRoutedReplicas(Specs.Deployment spec, RouterKind kind, int count) {
        for (int i = 0; i < count; i++) {
            replicas.add(FakeRouter.inFrontOf(client, ns, "qwen", kind));
        }
        routers.put(ns, "qwen", kind, replicas.toArray(FakeRouter[]::new));
        client.resource(spec.router(kind.wireName(), count).namespace(ns).build())
                .create();
    }

    private void awaitServing(String... pods) {
        List<FakeRouter> inFront = replicas.isEmpty() ? List.of(router) : replicas;
        await().atMost(CONVERGE)
                .until(() -> inFront.stream().allMatch(r -> Stream.of(pods).allMatch(r::selects)));
    }

    private void scale(String role, int replicas) {
        Specs.scale(client, ns, "qwen", role, replicas);
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

    private Optional<RetirementStatus> retirementOf(int ordinal) {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(ns)
                .withName("qwen")
                .get();
        return Optional.ofNullable(md)
                .map(ModelDeployment::getStatus)
                .flatMap(s -> s.retirements() == null
                        ? Optional.empty()
                        : s.retirements().stream()
                                .filter(r -> r.replicaOrdinal() == ordinal)
                                .findFirst());
    }

    private void awaitRetirement(String state, String reason) {
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(retirement()).hasValueSatisfying(r -> {
                    assertThat(r.state()).isEqualTo(state);
                    assertThat(r.reason()).isEqualTo(reason);
                }));
    }

    /** Held for this reason until the phase's budget is spent, then aborted for it. */
    private void holdsThenAbortsAtBudget(String state, String reason, Duration budget) {
        awaitRetirement(state, reason);
        clock.advance(budget);
        awaitRetirement("Aborted", reason);
    }

    private Pod pod(String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    private boolean gone(String name) {
        return pod(name) == null;
    }

    private FakeEngine engine(String pod) {
        return world.kubelet().engine(ns, pod).orElseThrow();
    }

    /** A streaming request sent straight to one Pod's engine, bypassing every router: work the target holds. */
    private LoadGenerator longRequestTo(String pod, int tokens) {
        FakeEngine engine = engine(pod);
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(pod, engine.uri(""))), 1, tokens, Duration.ofMillis(100));
        CompletableFuture.runAsync(load::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);
        return load;
    }

    /**
     * Two long streams straight to another replica's engine: it is then busier than a target holding one, so the
     * scale-down, which takes the replica with the fewest requests in flight, takes the target.
     */
    private void busierThanTheTarget(String pod) {
        busierThanTheTarget(pod, 400);
    }

    private void busierThanTheTarget(String pod, int tokens) {
        FakeEngine engine = engine(pod);
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(pod, engine.uri(""))), 2, tokens, Duration.ofMillis(100));
        load.start(Duration.ofSeconds(1));
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() >= 2);
    }

    /** The ordinal the retirement under way chose. */
    private int retiringOrdinal() {
        await().atMost(CONVERGE).until(() -> retirement().isPresent());
        return retirement().orElseThrow().replicaOrdinal();
    }

    private void assertKeptAndServing(String name, String uid) {
        await().atMost(CONVERGE).untilAsserted(() -> {
            Pod pod = pod(name);
            assertThat(pod).isNotNull();
            assertThat(pod.getMetadata().getUid()).isEqualTo(uid);
            assertThat(pod.getMetadata().getDeletionTimestamp()).isNull();
            assertThat(pod.getMetadata().getLabels()).containsEntry(Labels.SERVING, Labels.SERVING_YES);
        });
    }

    private List<String> eventReasons() {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .map(Event::getReason)
                .toList();
    }

    /** The load keeps the router dispatching to the replica that stays, which never holds the one that leaves. */
    @Test
    void scaleDownUnderStreamingLoadRetiresTwoReplicasAndCutsNothing() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(3).grace(30)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
        LoadGenerator load = new LoadGenerator(router, 3, 20, Duration.ofMillis(50)).start(Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(5)).until(() -> load.count(LoadGenerator.Outcome.COMPLETED) >= 3);

        scale("server", 1);

        List<String> all = List.of("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
        // which two go depends on where the streams were when each choice read them
        await().atMost(Duration.ofSeconds(60))
                .until(() -> all.stream().filter(this::gone).count() == 2);
        await().atMost(CONVERGE).until(() -> retirement().isEmpty());
        load.stop(Duration.ofSeconds(10));

        assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
        assertThat(load.count(LoadGenerator.Outcome.COMPLETED)).isGreaterThan(10);
        assertThat(all).filteredOn(name -> !gone(name)).hasSize(1);
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(eventReasons())
                        .contains("RetirementStarted", "Withdrawn", "ProvenIdle", "Completed"));
        assertThat(registry.find(Metrics.RETIREMENTS)
                        .tag(Metrics.OUTCOME, "completed")
                        .counter())
                .isNotNull()
                .satisfies(c -> assertThat(c.count()).isGreaterThanOrEqualTo(2));
        assertThat(registry.find(Metrics.RETIREMENT_DURATION)
                        .tag(Metrics.OUTCOME, "completed")
                        .timer())
                .isNotNull()
                .satisfies(t -> assertThat(t.max(TimeUnit.SECONDS)).isBetween(1.0, 60.0));
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(ns)
                .withName("qwen")
                .get();
        assertThat(Conditions.find(md.getStatus().conditions(), Conditions.RETIREMENT_PROGRESSING))
                .hasValueSatisfying(c -> {
                    assertThat(c.getStatus()).isEqualTo("False");
                    assertThat(c.getReason()).isEqualTo(StatusAggregator.REASON_NO_RETIREMENT);
                });
    }

    /**
     * The follower's hook ends after 5 s, so its Pod goes before the leader's: nothing of a leaving replica is put
     * back meanwhile, and once gone it stays gone.
     */
    @Test
    void aMultiPodReplicaScaledAwayUnderLoadIsCreatedOnceAndStaysGone() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2).size(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        Map<String, Set<String>> uidsSeen = new ConcurrentHashMap<>();
        try (SharedIndexInformer<Pod> seen = client.pods().inNamespace(ns).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                uidsSeen.computeIfAbsent(pod.getMetadata().getName(), n -> ConcurrentHashMap.newKeySet())
                        .add(pod.getMetadata().getUid());
            }

            @Override
            public void onUpdate(Pod before, Pod pod) {
                onAdd(pod);
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {}
        })) {
            LoadGenerator load = new LoadGenerator(router, 2, 20, Duration.ofMillis(50)).start(Duration.ofSeconds(60));
            await().atMost(Duration.ofSeconds(5)).until(() -> load.count(LoadGenerator.Outcome.COMPLETED) >= 2);

            scale("server", 1);
            int chosen = retiringOrdinal();
            List<String> leaving = List.of("qwen-server-r" + chosen + "-m0", "qwen-server-r" + chosen + "-m1");

            await().atMost(Duration.ofSeconds(60)).until(() -> leaving.stream().allMatch(this::gone));
            await().during(Duration.ofSeconds(8))
                    .atMost(Duration.ofSeconds(12))
                    .until(() -> leaving.stream().allMatch(this::gone));
            load.stop(Duration.ofSeconds(10));

            assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
            assertThat(leaving)
                    .allSatisfy(name ->
                            assertThat(uidsSeen.get(name)).as("UIDs of " + name).hasSize(1));
            assertThat(pod("qwen-server-r" + (1 - chosen) + "-m0")).isNotNull();
            assertThat(pod("qwen-server-r" + (1 - chosen) + "-m1")).isNotNull();
        }
    }

    /** Each router before each engine it serves, on the default image; SGLang also on a release of its older gauge names. */
    static Stream<Arguments> routers() {
        return Stream.of(
                Arguments.of(RouterKind.LLM_D_ROUTER, "vLLM", null),
                Arguments.of(RouterKind.LLM_D_ROUTER, "SGLang", null),
                Arguments.of(RouterKind.VLLM_ROUTER, "vLLM", null),
                Arguments.of(RouterKind.SGLANG_GATEWAY, "SGLang", null),
                Arguments.of(RouterKind.SGLANG_GATEWAY, "SGLang", "lmsysorg/sglang:v0.5.4"));
    }

    /**
     * Clients stream through the router's own entry while a replica retires, and the router discovers the change as
     * its release does. smg's discovery would see the replica leave its selector only at its 60 s reconcile, past the
     * withdrawing budget, so the operator withdraws the worker through smg's DELETE /workers/{id} to finish in time.
     */
    @ParameterizedTest(name = "{0} in front of {1} {2}")
    @MethodSource("routers")
    void aRetirementUnderStreamingLoadThroughTheRouterCutsNothingAndWithdrawsWellWithinItsBudget(
            RouterKind kind, String engine, String image) throws Exception {
        deployRouted(
                deployment("qwen", engine)
                        .role(role("server").replicas(2).grace(30).image(image)),
                kind);
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        Map<Integer, String> uids = Map.of(
                0,
                pod("qwen-server-r0-m0").getMetadata().getUid(),
                1,
                pod("qwen-server-r1-m0").getMetadata().getUid());
        LoadGenerator load = new LoadGenerator(router, 3, 20, Duration.ofMillis(50)).start(Duration.ofSeconds(90));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> load.requests().stream()
                                .filter(r -> r.outcome() == LoadGenerator.Outcome.COMPLETED)
                                .map(LoadGenerator.Request::pod)
                                .distinct()
                                .count()
                        == 2);

        scale("server", 1);
        int chosen = retiringOrdinal();
        String leaving = "qwen-server-r" + chosen + "-m0";

        await().atMost(Budgets.WITHDRAWING.dividedBy(2))
                .untilAsserted(() -> assertThat(eventReasons()).contains("Withdrawn"));
        await().atMost(CONVERGE)
                .until(() -> Optional.ofNullable(pod(leaving))
                        .filter(p -> uids.get(chosen).equals(p.getMetadata().getUid()))
                        .isEmpty());
        await().atMost(CONVERGE).until(() -> retirement().isEmpty());
        load.stop(Duration.ofSeconds(10));
        assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
        assertThat(load.count(LoadGenerator.Outcome.REJECTED)).isZero();
        assertThat(load.requests())
                .extracting(LoadGenerator.Request::pod)
                .contains("qwen-server-r0-m0", "qwen-server-r1-m0");
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(eventReasons()).contains("Completed"));
        assertThat(eventReasons()).doesNotContain("RouterUnavailable");
    }

    /**
     * smg's discovery still counts a worker it was told to drop as its own until its next relist, a minute away, so
     * it would never route to the replica again by itself: the operator gives it back.
     */
    @Test
    void aReplicaKeptAfterSmgWasToldToDropItIsRoutedToAgain() throws Exception {
        deployRouted(deployment("qwen", "SGLang").role(role("server").replicas(2)), RouterKind.SGLANG_GATEWAY);
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        String uid = pod("qwen-server-r1-m0").getMetadata().getUid();
        busierThanTheTarget("qwen-server-r0-m0");
        longRequestTo("qwen-server-r1-m0", 400);

        scale("server", 1);
        awaitRetirement("Draining", "Busy");
        assertThat(router.selects("qwen-server-r1-m0")).isFalse();
        clock.advance(Budgets.DRAINING);
        awaitRetirement("Aborted", "Busy");

        assertKeptAndServing("qwen-server-r1-m0", uid);
        await().atMost(CONVERGE).until(() -> router.selects("qwen-server-r1-m0"));
    }

    /**
     * The add-back after an abort is refused once (a gateway Pod restarting): the replica is not left out of routing
     * while its status says it serves; the next passes find it missing from the gateway's list and add it again.
     */
    @Test
    void aReplicaWhoseAddBackFailsAfterAnAbortIsRoutedAgainOnALaterPass() throws Exception {
        deployRouted(deployment("qwen", "SGLang").role(role("server").replicas(2)), RouterKind.SGLANG_GATEWAY);
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        longRequestTo("qwen-server-r1-m0", 400);

        scale("server", 1);
        awaitRetirement("Draining", "Busy");
        router.refuseWorkerAdditions(1);
        clock.advance(Budgets.DRAINING);
        awaitRetirement("Aborted", "Busy");

        await().atMost(Duration.ofSeconds(15)).until(() -> router.selects("qwen-server-r1-m0"));
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(client.resources(ModelDeployment.class)
                                .inNamespace(ns)
                                .withName("qwen")
                                .get()
                                .getStatus()
                                .router()
                                .unroutedReplicas())
                        .isZero());
    }

    /**
     * A follower of a two-Pod SGLang replica is deleted while its leader streams: the gateway, which would see the
     * leader's withdrawal only at its 60 s relist, is told at once, so the requests that follow go to the whole
     * replica, and the leader's stream completes before the follower leaves.
     */
    @Test
    void aFollowerLostUnderLoadTakesItsSglangReplicaOutOfTheGatewayAtOnce() {
        deployRouted(
                deployment("qwen", "SGLang").role(role("server").replicas(2).size(2)), RouterKind.SGLANG_GATEWAY);
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        LoadGenerator leaderWork = longRequestTo("qwen-server-r0-m0", 80);

        client.pods().inNamespace(ns).withName("qwen-server-r0-m1").delete();

        await().atMost(Duration.ofSeconds(10)).until(() -> !router.selects("qwen-server-r0-m0"));
        Instant withdrawn = Instant.now();
        LoadGenerator clients = new LoadGenerator(router, 1, 5, Duration.ofMillis(10));
        for (int i = 0; i < 6; i++) {
            assertThat(clients.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }
        assertThat(router.dispatchesTo("qwen-server-r0-m0", withdrawn)).isEmpty();
        await().atMost(CONVERGE).until(() -> leaderWork.requests().size() == 1);
        assertThat(leaderWork.count(LoadGenerator.Outcome.COMPLETED)).isEqualTo(1);
    }

    @Test
    void aRouterThatKeepsSelectingTheTargetHoldsItAndTheWithdrawalAborts() {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)), RouterKind.VLLM_ROUTER);
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        String uid = pod("qwen-server-r1-m0").getMetadata().getUid();
        router.pin("qwen-server-r1-m0", true);

        scale("server", 1);
        holdsThenAbortsAtBudget("Withdrawing", "RouterStillSelects", Budgets.WITHDRAWING);
        assertKeptAndServing("qwen-server-r1-m0", uid);
    }

    @Test
    void oneRouterReplicaStillSelectingTheTargetHoldsTheWithdrawalThoughTheOthersDroppedIt() {
        deployRoutedReplicas(deployment("qwen", "vLLM").role(role("server").replicas(2)), RouterKind.VLLM_ROUTER, 3);
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        String uid = pod("qwen-server-r1-m0").getMetadata().getUid();
        // its watch drops and comes back without a relist, so it never learns that the target left its selector
        replicas.get(2).dropWatch();

        scale("server", 1);
        awaitRetirement("Withdrawing", "RouterStillSelects");
        replicas.get(2).reconnectWatch();
        assertThat(replicas.get(2).selects("qwen-server-r1-m0")).isTrue();
        assertThat(replicas.subList(0, 2)).noneMatch(r -> r.selects("qwen-server-r1-m0"));
        clock.advance(Budgets.WITHDRAWING);
        awaitRetirement("Aborted", "RouterStillSelects");
        assertKeptAndServing("qwen-server-r1-m0", uid);
    }

    /** A router Pod that has routed and now cannot be asked holds the withdrawal, and the hold names it and what it did. */
    @Test
    void aRouterPodThatCannotBeAskedHoldsTheWithdrawalAndTheHoldNamesIt() {
        deployRoutedReplicas(deployment("qwen", "vLLM").role(role("server").replicas(2)), RouterKind.VLLM_ROUTER, 2);
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        replicas.get(1).setUp(false);

        scale("server", 1);

        awaitRetirement("Withdrawing", "RouterUnavailable");
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(retirement().orElseThrow().message())
                        .matches(".*router Pod qwen-router-\\d+ answered HTTP 503.*"));
        assertThat(pod("qwen-server-r1-m0").getMetadata().getDeletionTimestamp())
                .isNull();
    }

    /**
     * A dispatch the router made while it still selected the target (it learns of the withdrawal late) holds the
     * withdrawal until the counts stop moving; then the replica drains and goes. A router that keeps dispatching to it
     * holds it to the budget (the machine's own tests).
     */
    @Test
    void aDispatchToTheTargetAfterItsWithdrawalHoldsItUntilTheCountsStopMoving() {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        router.pin("qwen-server-r1-m0", true);
        scale("server", 1);
        awaitRetirement("Withdrawing", "RouterStillSelects");

        router.reportDispatch("qwen-server-r0-m0");
        router.reportDispatch("qwen-server-r1-m0");
        router.pin("qwen-server-r1-m0", false);

        await().atMost(CONVERGE).until(() -> gone("qwen-server-r1-m0"));
        // the Completed event may be written just after the Pod is gone
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(eventReasons()).contains("RecentDispatch", "Withdrawn", "Completed"));
    }

    /**
     * A request sent just before the scale-down spends 10.5 s in vLLM's front end (a long prompt being tokenized),
     * where no gauge counts it. The operator's reads count only from 5 s after the withdrawal held, and the hook
     * serves on 5 s more before its own reads: by then the request has reached the engine core and is waited for. On
     * a release without vLLM's own drain (v0.17.1) nothing else would keep it from being aborted at SIGTERM.
     */
    @Test
    void aRequestStillInTheEnginesFrontEndWhenTheReplicaIsWithdrawnIsNotCut() {
        world.kubelet().shapeEngines((pod, behaviour) -> {
            if (pod.getMetadata().getName().equals("qwen-server-r1-m0")) {
                behaviour.tokenizing(Duration.ofMillis(10_500));
            }
        });
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2).image("vllm/vllm-openai:v0.17.1")));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        LoadGenerator hidden = longRequestTo("qwen-server-r1-m0", 20);
        assertThat(engine("qwen-server-r1-m0").counted())
                .as("the gauges do not see it yet")
                .isZero();

        scale("server", 1);

        await().atMost(Duration.ofSeconds(60))
                .until(() -> gone("qwen-server-r1-m0") && !hidden.requests().isEmpty());
        assertThat(hidden.requests())
                .singleElement()
                .satisfies(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
    }

    /**
     * The engines' timings as the engine tier saw them (vLLM 0.32.0 exits 6 s after its drain; SGLang 0.5.15 shows a
     * finished request for about 30 s more and exits at its watchdog's next look and a teardown): the replica goes only
     * once its page shows it idle, its stream completes, and its engine leaves within the grace, unkilled.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void aBusyReplicaOfEnginesTimedAsObservedGoesOnceItsPageShowsItIdleAndLeavesUnkilled(Engine kind) {
        world.kubelet().shapeEngines((pod, behaviour) -> behaviour.timedAsObserved(kind));
        deployRouted(deployment("qwen", kind.wireName()).role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        LoadGenerator held = longRequestTo("qwen-server-r1-m0", 30);

        scale("server", 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> !held.requests().isEmpty());
        Instant ended = Instant.now();

        await().atMost(Duration.ofSeconds(90)).until(() -> gone("qwen-server-r1-m0"));
        assertThat(held.requests())
                .singleElement()
                .satisfies(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
        Termination left = world.kubelet().terminations().stream()
                .filter(t -> t.namespace().equals(ns) && t.pod().equals("qwen-server-r1-m0"))
                .findFirst()
                .orElseThrow();
        assertThat(left.killed()).isFalse();
        assertThat(left.exited().minus(left.sigterm()))
                .isGreaterThanOrEqualTo(kind == Engine.VLLM ? Duration.ofSeconds(6) : Duration.ofMillis(4_400));
        if (kind == Engine.SGLANG) {
            assertThat(Duration.between(ended, left.deletionSeen()))
                    .as("deleted only after the idle write")
                    .isGreaterThan(Duration.ofSeconds(25));
        }
    }

    @Test
    void aBusyReplicaIsHeldUntilItsLastRequestEnds() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        LoadGenerator held = longRequestTo("qwen-server-r1-m0", 150);

        scale("server", 1);
        awaitRetirement("Draining", "Busy");
        assertThat(pod("qwen-server-r1-m0").getMetadata().getDeletionTimestamp())
                .isNull();

        await().atMost(Duration.ofSeconds(40)).until(() -> gone("qwen-server-r1-m0"));
        assertThat(held.requests())
                .singleElement()
                .satisfies(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
    }

    @Test
    void aReplicaThatStaysBusyAbortsAtTheDrainingBudgetAndServesAgain() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        String uid = pod("qwen-server-r1-m0").getMetadata().getUid();
        busierThanTheTarget("qwen-server-r0-m0");
        longRequestTo("qwen-server-r1-m0", 400);

        scale("server", 1);
        holdsThenAbortsAtBudget("Draining", "Busy", Budgets.DRAINING);
        assertKeptAndServing("qwen-server-r1-m0", uid);
        assertThat(eventReasons()).contains("Busy");

        // the user asks again: a new operation starts at once, and a kept replica counts as surplus
        client.resources(ModelDeployment.class).inNamespace(ns).withName("qwen").edit(md -> {
            md.getMetadata().setAnnotations(Map.of(Annotations.RETRY_RETIREMENT, "again-1"));
            return md;
        });
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(retirement()).hasValueSatisfying(r -> {
                    assertThat(r.state()).isIn("Withdrawing", "Draining");
                    assertThat(r.cause()).isEqualTo("Surplus");
                    assertThat(r.retryToken()).isEqualTo("again-1");
                }));
    }

    @Test
    void anAbortedRetirementIsRetriedAfterTheCoolDown() {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        router.setUp(false);

        scale("server", 1);
        holdsThenAbortsAtBudget("Withdrawing", "RouterUnavailable", Budgets.WITHDRAWING);
        router.setUp(true);
        clock.advance(Duration.ofMinutes(5));

        await().atMost(CONVERGE).until(() -> gone("qwen-server-r1-m0"));
    }

    /** The restart ended the stream the replica held; the new process is proven idle and the replica leaves at once. */
    @Test
    void aContainerRestartDuringTheDrainStartsTheProofOverAndTheReplicaStillLeaves() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        longRequestTo("qwen-server-r1-m0", 400);
        scale("server", 1);
        awaitRetirement("Draining", "Busy");

        world.kubelet().restartContainer(ns, "qwen-server-r1-m0");

        // no budget passes on the test clock: only a fresh idle proof can delete the replica
        await().atMost(CONVERGE).until(() -> gone("qwen-server-r1-m0"));
        assertThat(eventReasons()).contains("ContainerRestarted", "ProvenIdle");
    }

    /**
     * A follower's container restarts while its replica drains: the engine's collective fails with it, so the leader's
     * engine restarts too and its stream ends there, which nothing in a Pod's drain can prevent. The retirement takes
     * the restart for what it is: nothing read before it counts, and only a fresh idle proof deletes the replica.
     */
    @Test
    void aFollowerRestartDuringTheDrainTakesTheLeaderDownAndOnlyAFreshIdleProofDeletesTheReplica() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2).size(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        LoadGenerator leaderWork = longRequestTo("qwen-server-r1-m0", 400);
        scale("server", 1);
        awaitRetirement("Draining", "Busy");

        world.kubelet().restartContainer(ns, "qwen-server-r1-m1");

        // no budget passes on the test clock: only a fresh idle proof can delete the replica
        await().atMost(CONVERGE).until(() -> gone("qwen-server-r1-m0") && gone("qwen-server-r1-m1"));
        assertThat(eventReasons()).contains("ContainerRestarted", "ProvenIdle");
        await().atMost(Duration.ofSeconds(10)).until(() -> leaderWork.requests().size() == 1);
        assertThat(leaderWork.count(LoadGenerator.Outcome.CUT))
                .as("the collective's failure ended it, not a deletion")
                .isEqualTo(1);
        assertThat(world.kubelet().terminations())
                .filteredOn(t -> t.namespace().equals(ns))
                .noneMatch(Termination::killed);
    }

    /**
     * {@code kubectl delete pod} of a follower: its replica stops with it (the engine's collective spans both Pods), so
     * the leader is taken out of service at once and gets nothing new, the follower's hook keeps it until the leader's
     * stream has ended, and once the follower is replaced the replica serves again.
     */
    @Test
    void aFollowerDeletedByHandTakesItsReplicaOutOfServiceUntilItIsWholeAgain() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").size(2)));
        awaitServing("qwen-server-r0-m0");
        LoadGenerator leaderWork = longRequestTo("qwen-server-r0-m0", 120);
        String followerUid = pod("qwen-server-r0-m1").getMetadata().getUid();

        client.pods().inNamespace(ns).withName("qwen-server-r0-m1").delete();

        await().atMost(CONVERGE).until(() -> !router.selects("qwen-server-r0-m0"));
        assertThat(pod("qwen-server-r0-m0").getMetadata().getLabels()).containsEntry(Labels.SERVING, Labels.SERVING_NO);
        assertThat(eventReasons()).contains("ReplicaMemberLeaving");
        await().atMost(CONVERGE).until(() -> leaderWork.requests().size() == 1);
        assertThat(leaderWork.count(LoadGenerator.Outcome.COMPLETED))
                .as("the follower left only once the leader was idle")
                .isEqualTo(1);
        await().atMost(CONVERGE)
                .until(() -> Optional.ofNullable(pod("qwen-server-r0-m1"))
                        .filter(p -> !p.getMetadata().getUid().equals(followerUid)
                                && p.getMetadata().getDeletionTimestamp() == null)
                        .isPresent());
        awaitServing("qwen-server-r0-m0");
        assertThat(pod("qwen-server-r0-m0").getMetadata().getLabels())
                .containsEntry(Labels.SERVING, Labels.SERVING_YES);
    }

    @Test
    void aPartialEnvelopeHoldsUntilEveryGaugeIsBack() {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        String missing = InFlightGauges.of(Engine.VLLM).get(0).name();
        // an unreadable replica goes only after every readable one, so the one kept is unreadable too
        engine("qwen-server-r0-m0").faults().missingGauge(missing);
        engine("qwen-server-r1-m0").faults().missingGauge(missing);

        scale("server", 1);
        awaitRetirement("Draining", "PartialEnvelope");
        assertThat(retirement().orElseThrow().message()).contains(missing);

        engine("qwen-server-r1-m0").faults().missingGauge(null);
        await().atMost(CONVERGE).until(() -> gone("qwen-server-r1-m0"));
    }

    /**
     * A follower deleted by hand while its own data-parallel group runs a request: its hook reads its own page as well
     * as its leader's, so the follower stops, taking the collective with it, only once that request has ended.
     */
    @Test
    void aFollowerDeletedByHandWaitsForTheRequestsOfItsOwnDataParallelGroup() {
        deployRouted(deployment("qwen", "SGLang")
                .role(role("server").replicas(1).size(2).extraArgs("--dp-size", "2", "--enable-dp-attention")));
        awaitServing("qwen-server-r0-m0");
        LoadGenerator held = longRequestTo("qwen-server-r0-m0", 100);
        assertThat(engine("qwen-server-r0-m0").shownOnMember(1))
                .as("the follower's group runs it")
                .hasSize(1);

        client.pods().inNamespace(ns).withName("qwen-server-r0-m1").delete();

        await().atMost(Duration.ofSeconds(40)).until(() -> !held.requests().isEmpty());
        assertThat(held.requests())
                .singleElement()
                .satisfies(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
    }

    /**
     * A multi-Pod SGLang replica whose data-parallel groups reach its followers counts their requests on the followers'
     * own pages: the retirement reads every member, holds while a follower's group runs a request the leader's page
     * does not show, and the replica leaves once it ends, with nothing cut.
     */
    @Test
    void aMultiPodSglangReplicaWithDataParallelGroupsOnItsFollowersIsReadOnEveryMember() throws Exception {
        deployRouted(deployment("qwen", "SGLang")
                .role(role("server").replicas(2).size(2).extraArgs("--dp-size", "2", "--enable-dp-attention")));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        LoadGenerator held = longRequestTo("qwen-server-r1-m0", 200);
        assertThat(engine("qwen-server-r1-m0").shownOnMember(0))
                .as("the leader's own page shows none of it")
                .isEmpty();
        assertThat(engine("qwen-server-r1-m0").shownOnMember(1))
                .as("the follower's page shows it")
                .hasSize(1);

        scale("server", 1);

        awaitRetirement("Draining", "Busy");
        assertThat(retirement().orElseThrow().message()).contains("qwen-server-r1-m1");
        assertThat(pod("qwen-server-r1-m0").getMetadata().getDeletionTimestamp())
                .isNull();
        await().atMost(Duration.ofSeconds(40)).until(() -> gone("qwen-server-r1-m0") && gone("qwen-server-r1-m1"));
        assertThat(held.requests())
                .singleElement()
                .satisfies(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
    }

    @Test
    void aMemberDeletedByHandAbortsTheRetirement() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        busierThanTheTarget("qwen-server-r0-m0");
        longRequestTo("qwen-server-r1-m0", 300);
        scale("server", 1);
        awaitRetirement("Draining", "Busy");

        client.pods().inNamespace(ns).withName("qwen-server-r1-m0").delete();

        awaitRetirement("Aborted", "TerminatedOutsideOperator");
    }

    /** A deployment without a router: clients reach its Pods through the role's Service alone. */
    private void deployUnrouted(int replicas) {
        client.resource(deployment("qwen", "vLLM")
                        .namespace(ns)
                        .role(role("server").replicas(replicas))
                        .build())
                .create();
        String service = Names.roleService("qwen", "server");
        await().atMost(CONVERGE)
                .until(() -> world.endpoints().slicesOf(ns, service).stream()
                                .flatMap(slice ->
                                        slice.getEndpoints() == null ? Stream.empty() : slice.getEndpoints().stream())
                                .filter(e ->
                                        Boolean.TRUE.equals(e.getConditions().getReady()))
                                .count()
                        == replicas);
    }

    /**
     * Without a router, an idle replica's withdrawal is proven by its own connection table: no client is connected
     * once the endpoints are clear, so it is deleted after the propagation margin and two reads, in seconds.
     */
    @Test
    void withoutARouterAnIdleReplicaRetiresInSeconds() {
        deployUnrouted(2);
        CompletableFuture<Instant> deleted = DeletionWatch.of(client, ns, "qwen-server-r1-m0");
        Instant asked = Instant.now();

        scale("server", 1);

        Instant at = deleted.orTimeout(CONVERGE.toSeconds(), TimeUnit.SECONDS).join();
        // the propagation margin (5 s) plus two reads a second apart; generous for a loaded machine
        assertThat(Duration.between(asked, at)).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(25));
        await().atMost(CONVERGE).until(() -> retirement().isEmpty() && gone("qwen-server-r1-m0"));
        assertThat(pod("qwen-server-r0-m0")).isNotNull();
        // the Event is written beside the status that ends the retirement, not before it
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(eventReasons())
                        .contains("RetirementStarted", "Withdrawn", "ProvenIdle", "Completed"));
        assertThat(eventReasons()).doesNotContain("OpenConnections");
    }

    /**
     * A client's keep-alive connection outlives the endpoints (conntrack keeps it to its Pod), so a request it sends
     * after the withdrawal still reaches the leaving replica: the replica is held while the connection is open, the
     * request streams to its end, and the replica goes only once the engine has closed the idle connection.
     */
    @Test
    void withoutARouterAKeptConnectionHoldsTheReplicaUntilItsLastRequestEndsAndItIsClosed() throws Exception {
        deployUnrouted(2);
        String leaving = "qwen-server-r1-m0";
        try (KubeProxyService service = new KubeProxyService(
                world.endpoints(),
                ns,
                Names.roleService("qwen", "server"),
                Duration.ofSeconds(1),
                new LoopbackAddresses().next())) {
            await().atMost(CONVERGE).until(() -> service.reachable().size() == 2);
            KubeProxyService.Connection kept = service.connectTo(leaving);
            // a client between turns of a chat: a tiny request every second keeps its connection from idling out
            ScheduledExecutorService turns = Executors.newSingleThreadScheduledExecutor();
            turns.scheduleAtFixedRate(() -> kept.stream(1, Duration.ofMillis(1)), 0, 1, TimeUnit.SECONDS);
            CompletableFuture<Instant> deleted = DeletionWatch.of(client, ns, leaving);

            scale("server", 1);

            await().atMost(CONVERGE)
                    .untilAsserted(() -> assertThat(retirement()).hasValueSatisfying(r -> {
                        assertThat(r.replicaOrdinal()).isEqualTo(1);
                        assertThat(r.state()).isEqualTo("Draining");
                        assertThat(r.reason()).isEqualTo("OpenConnections");
                        assertThat(r.message()).contains("1 client is still connected");
                    }));
            await().atMost(CONVERGE).until(() -> !service.reachable().contains(leaving));
            turns.shutdown();
            assertThat(turns.awaitTermination(5, TimeUnit.SECONDS)).isTrue();

            LoadGenerator.Request last = kept.stream(30, Duration.ofMillis(100));
            Instant lastEnded = Instant.now();

            assertThat(last.outcome()).as(last.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
            assertThat(last.pod()).isEqualTo(leaving);
            assertThat(deleted).as("no deletion while the request streamed").isNotDone();
            assertThat(kept.closedByServer(Duration.ofSeconds(20)))
                    .as("the engine closes the idle connection")
                    .isTrue();
            Instant closed = Instant.now();
            Instant at =
                    deleted.orTimeout(CONVERGE.toSeconds(), TimeUnit.SECONDS).join();
            assertThat(at).isAfter(closed);
            assertThat(Duration.between(lastEnded, closed)).isGreaterThanOrEqualTo(Duration.ofSeconds(4));
            kept.close();
        }
        await().atMost(CONVERGE).until(() -> retirement().isEmpty() && gone(leaving));
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(eventReasons()).contains("OpenConnections", "ProvenIdle", "Completed"));
    }

    @Test
    void aTakeOverReplicaIsHeld() {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2).command("python3", "-m", "my.server")));
        await().atMost(CONVERGE).until(() -> pod("qwen-server-r1-m0") != null);

        scale("server", 1);

        holdsThenAbortsAtBudget("Draining", "TakeOver", Budgets.DRAINING);
        assertThat(pod("qwen-server-r1-m0").getMetadata().getDeletionTimestamp())
                .isNull();
    }

    @Test
    void aReplicaWithoutALeaderIsHeldAsNoLeader() {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2).size(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        // a replica no member can answer for goes only after every readable one, so both are made alike
        relabel("qwen-server-r0-m0", Labels.MEMBER_INDEX, "1");
        relabel("qwen-server-r1-m0", Labels.MEMBER_INDEX, "1");

        scale("server", 1);

        awaitRetirement("Draining", "NoLeader");
    }

    @Test
    void aReplicaWithTwoLeadersIsHeldAsMultipleLeaders() {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(2).size(2)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0");
        relabel("qwen-server-r0-m1", Labels.MEMBER_INDEX, Labels.LEADER_INDEX);
        relabel("qwen-server-r1-m1", Labels.MEMBER_INDEX, Labels.LEADER_INDEX);

        scale("server", 1);

        awaitRetirement("Draining", "MultipleLeaders");
    }

    @Test
    void aVllmPrefillReplicaIsRefusedAtOnceAndNeverRetriedByItself() {
        refusesSplitReplicas("vLLM");
    }

    @Test
    void anSglangPrefillReplicaIsRefusedAtOnceAndNeverRetriedByItself() {
        refusesSplitReplicas("SGLang");
    }

    private void refusesSplitReplicas(String engine) {
        deployRouted(deployment("qwen", engine)
                .scaling("prefill")
                .role(role("prefill").kind("Prefill").replicas(2))
                .role(role("decode").kind("Decode")));
        await().atMost(CONVERGE)
                .until(() -> pod("qwen-prefill-r1-m0") != null
                        && pod("qwen-prefill-r1-m0").getStatus() != null
                        && pod("qwen-prefill-r1-m0").getStatus().getPodIP() != null);
        String uid = pod("qwen-prefill-r1-m0").getMetadata().getUid();

        scale("prefill", 1);

        awaitRetirement("Aborted", "Disaggregated");
        clock.advance(Duration.ofMinutes(10));
        assertThat(retirement()).hasValueSatisfying(r -> assertThat(r.reason()).isEqualTo("Disaggregated"));
        assertKeptAndServing("qwen-prefill-r1-m0", uid);
    }

    /** A refusal is per replica: another role's scale-down goes ahead, and status names the refused replica. */
    @Test
    void aRefusedReplicaNeverBlocksAnotherRetirement() {
        deployRouted(deployment("qwen", "vLLM")
                .scaling("prefill")
                .role(role("prefill").kind("Prefill").replicas(2))
                .role(role("server").replicas(2)));
        awaitServing("qwen-prefill-r0-m0", "qwen-prefill-r1-m0", "qwen-server-r0-m0", "qwen-server-r1-m0");
        String prefillUid = pod("qwen-prefill-r1-m0").getMetadata().getUid();
        scale("prefill", 1);
        awaitRetirement("Aborted", "Disaggregated");

        scale("server", 1);

        await().atMost(CONVERGE).until(() -> gone("qwen-server-r1-m0"));
        assertKeptAndServing("qwen-prefill-r1-m0", prefillUid);
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(ns)
                .withName("qwen")
                .get();
        assertThat(md.getStatus().abortedRetirements()).singleElement().satisfies(aborted -> {
            assertThat(aborted.roleName()).isEqualTo("prefill");
            assertThat(aborted.replicaOrdinal()).isEqualTo(1);
            assertThat(aborted.reason()).isEqualTo("Disaggregated");
            assertThat(aborted.retryAt())
                    .as("a refusal is retried only when asked")
                    .isNull();
        });
    }

    /**
     * Each retirement is its own: of two replicas a reduction takes away at once, the idle one is deleted while the
     * busy one is still held, and the busy one's abort keeps only itself, with its own cool-down.
     */
    @Test
    void aBusyLeavingReplicaNeverHoldsBackTheOtherOne() throws Exception {
        deployRouted(deployment("qwen", "vLLM").role(role("server").replicas(3)));
        awaitServing("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
        String busyUid = pod("qwen-server-r2-m0").getMetadata().getUid();
        busierThanTheTarget("qwen-server-r0-m0");
        longRequestTo("qwen-server-r2-m0", 400);

        scale("server", 1);

        await().atMost(CONVERGE).until(() -> gone("qwen-server-r1-m0"));
        // the idle one's own entry may still be listed, settling, in the same status
        assertThat(retirementOf(2))
                .as("the busy one is still held while the idle one is gone")
                .hasValueSatisfying(r -> {
                    assertThat(r.state()).isEqualTo("Draining");
                    assertThat(r.reason()).isEqualTo("Busy");
                });
        clock.advance(Budgets.DRAINING);
        assertKeptAndServing("qwen-server-r2-m0", busyUid);
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(client.resources(ModelDeployment.class)
                                .inNamespace(ns)
                                .withName("qwen")
                                .get()
                                .getStatus()
                                .abortedRetirements())
                        .singleElement()
                        .satisfies(aborted -> {
                            assertThat(aborted.replicaOrdinal()).isEqualTo(2);
                            assertThat(aborted.reason()).isEqualTo("Busy");
                            assertThat(aborted.attempts()).isEqualTo(1);
                            assertThat(aborted.retryAt()).isNotNull();
                        }));
    }

    private void relabel(String pod, String key, String value) {
        client.pods()
                .inNamespace(ns)
                .withName(pod)
                .edit(p -> new PodBuilder(p)
                        .editMetadata()
                        .addToLabels(key, value)
                        .endMetadata()
                        .build());
    }
}
