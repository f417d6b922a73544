package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.retire.Budgets;
import dev.ebb.operator.sim.DeletionWatch;
import dev.ebb.operator.sim.KubeProxyService;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.Termination;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The retirement protocol end to end, from the engine's reads on: busy replicas, budgets and aborts, restarts and
 * members deleted by hand, replicas without a router, and replicas the protocol holds or refuses.
 */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class RetirementHoldsIT extends RetirementWorld {
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
        // the new follower starts, the leader is Ready again once it runs, and the operator puts the replica back:
        // three steps, each a pass of its owner, which a loaded machine was seen taking over 30 s for
        await().atMost(Duration.ofSeconds(90)).until(() -> router.selects("qwen-server-r0-m0"));
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
}
