package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.observe.Metrics;
import dev.ebb.operator.retire.Budgets;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.Termination;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The retirement protocol end to end, up to the engine's reads: scale-downs under streaming load, each router kind,
 * and what holds a withdrawal (a router still selecting or dispatching, a request still in the front end).
 */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class RetirementIT extends RetirementWorld {
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
}
