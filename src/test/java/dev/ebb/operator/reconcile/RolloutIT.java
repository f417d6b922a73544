package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.retire.Budgets;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimClock;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Rollouts end to end in the test world: one replica at a time, each old one draining through its own hook. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class RolloutIT {
    /**
     * A bound on three replicas each retired through the protocol and replaced, far above the 15-30 s they take on an
     * idle machine: the suite runs on two loaded cores, and a timeout reports where the rollout stood.
     */
    private static final Duration ROLLOUT = Duration.ofMinutes(3);

    private static final List<String> SERVERS = List.of("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");

    @Inject
    KubernetesClient client;

    @Inject
    SimClock clock;

    /** A gauge every vLLM page must carry: without it a read is partial and never counts as idle. */
    private static final String UNREAD_GAUGE =
            InFlightGauges.of(Engine.VLLM).get(0).name();

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    private final String ns = world.namespace("rollout");
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    private FakeRouter router;

    @BeforeEach
    void start() {
        router = world.routerInFrontOf(ns, "qwen", RouterKind.LLM_D_ROUTER);
    }

    @AfterEach
    void stop() {
        sampler.shutdownNow();
    }

    private void deployThreeServers(Specs.Role server) {
        client.resource(deployment("qwen", "vLLM")
                        .router("llm-d-router")
                        .namespace(ns)
                        .role(server.replicas(3))
                        .build())
                .create();
        await().atMost(Duration.ofSeconds(30)).until(() -> SERVERS.stream().allMatch(router::selects));
    }

    private void editServer(UnaryOperator<RoleSpec> change) {
        Specs.editRole(client, ns, "qwen", "server", change);
    }

    private List<Pod> servers() {
        return client.pods()
                .inNamespace(ns)
                .withLabel(Labels.ROLE, "server")
                .list()
                .getItems();
    }

    /** Every server Pod exists at the new configuration, none leaving, and the router selects all three again. */
    private boolean rolledOut(String oldHash) {
        List<Pod> pods = servers();
        return pods.size() == 3
                && pods.stream()
                        .noneMatch(
                                p -> oldHash.equals(p.getMetadata().getLabels().get(Labels.CONFIG_HASH)))
                && pods.stream().allMatch(p -> p.getMetadata().getDeletionTimestamp() == null)
                && SERVERS.stream().allMatch(router::selects);
    }

    private String hashOfServers() {
        return servers().get(0).getMetadata().getLabels().get(Labels.CONFIG_HASH);
    }

    private void awaitRollout(Callable<Boolean> done) {
        try {
            await().atMost(ROLLOUT).until(done);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(e.getMessage() + "\n" + whereTheRolloutStands(), e);
        }
    }

    private String whereTheRolloutStands() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(ns)
                .withName("qwen")
                .get();
        StringBuilder out = new StringBuilder("status: ")
                .append(md == null ? "none" : md.getStatus())
                .append("\npods:");
        servers()
                .forEach(p -> out.append("\n  ")
                        .append(p.getMetadata().getName())
                        .append(' ')
                        .append(p.getMetadata().getUid())
                        .append(" labels=")
                        .append(p.getMetadata().getLabels())
                        .append(" deleting=")
                        .append(p.getMetadata().getDeletionTimestamp()));
        out.append("\nevents:");
        RecordedEvents.occurrences(client, ns)
                .forEach(e ->
                        out.append("\n  ").append(e.getReason()).append(": ").append(e.getMessage()));
        return out.toString();
    }

    private List<Event> rolloutSteps() {
        return RecordedEvents.occurrences(client, ns).stream()
                .filter(e -> "RolloutStep".equals(e.getReason()))
                .toList();
    }

    @Test
    void anImageChangeUnderStreamingLoadCutsNothingAndNeverMissesMoreThanOneReplica() throws Exception {
        deployThreeServers(role("server"));
        String oldHash = hashOfServers();
        LoadGenerator load = new LoadGenerator(router, 3, 20, Duration.ofMillis(50)).start(Duration.ofMinutes(3));
        await().atMost(Duration.ofSeconds(5)).until(() -> load.count(LoadGenerator.Outcome.COMPLETED) >= 3);
        AtomicInteger fewestServing = new AtomicInteger(3);
        sampler.scheduleAtFixedRate(
                () -> fewestServing.accumulateAndGet(router.selected().size(), Math::min),
                0,
                50,
                TimeUnit.MILLISECONDS);

        Instant edited = Instant.now();
        editServer(r -> Specs.withImage(r, "vllm/vllm-openai:v0.12.0"));
        awaitRollout(() -> rolledOut(oldHash));
        Duration took = Duration.between(edited, Instant.now());
        load.stop(Duration.ofSeconds(10));

        System.out.printf("rollout of 3 busy replicas took %.1f s%n", took.toMillis() / 1000.0);
        assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
        assertThat(fewestServing.get())
                .as("replicas serving at the worst moment")
                .isGreaterThanOrEqualTo(2);
        assertThat(servers())
                .allSatisfy(p -> assertThat(p.getSpec().getContainers().get(0).getImage())
                        .isEqualTo("vllm/vllm-openai:v0.12.0"));
        assertThat(rolloutSteps()).hasSize(3);
        assertThat(world.kubelet().terminations())
                .filteredOn(t -> t.namespace().equals(ns) && t.pod().startsWith("qwen-server"))
                .hasSize(3)
                .allSatisfy(t -> assertThat(t.killed()).isFalse());
    }

    @Test
    void aGenerationLongerThanTheGraceSurvivesARollout() {
        deployThreeServers(role("server").grace(15));
        String oldHash = hashOfServers();
        String first = "qwen-server-r2-m0";
        FakeEngine engine = world.kubelet().engine(ns, first).orElseThrow();
        // 25 s of tokens: ten more than the grace lets a deleted Pod drain
        LoadGenerator one = new LoadGenerator(
                () -> Optional.of(new RouteTarget(first, engine.uri(""))), 1, 250, Duration.ofMillis(100));
        CompletableFuture<LoadGenerator.Request> request = CompletableFuture.supplyAsync(one::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);

        editServer(r -> Specs.withImage(r, "vllm/vllm-openai:v0.12.0"));

        await().atMost(Duration.ofSeconds(60))
                .until(() -> retirement()
                        .filter(r -> r.replicaOrdinal() == 2 && "Busy".equals(r.reason()))
                        .isPresent());
        assertThat(retirement().orElseThrow().cause()).isEqualTo("Rollout");
        awaitRollout(() -> rolledOut(oldHash));
        assertThat(request.join().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(world.kubelet().terminations())
                .filteredOn(t -> t.namespace().equals(ns) && t.pod().startsWith("qwen-server"))
                .hasSize(3)
                .allSatisfy(t -> assertThat(t.killed()).isFalse());
        one.close();
    }

    @Test
    void aGraceChangeTurnsReplicasOverAndEachOldOneLeavesWithTheGraceItWasCreatedWith() {
        deployThreeServers(role("server"));
        String oldHash = hashOfServers();
        Map<String, Long> graceByUid = new ConcurrentHashMap<>();
        sampler.scheduleAtFixedRate(
                () -> servers()
                        .forEach(p -> graceByUid.merge(
                                p.getMetadata().getUid(),
                                p.getSpec().getTerminationGracePeriodSeconds(),
                                (a, b) -> a.equals(b) ? a : -1L)),
                0,
                100,
                TimeUnit.MILLISECONDS);
        List<String> oldUids =
                servers().stream().map(p -> p.getMetadata().getUid()).toList();

        Instant edited = Instant.now();
        editServer(r -> Specs.withGrace(r, 45));
        awaitRollout(() -> rolledOut(oldHash));
        Duration took = Duration.between(edited, Instant.now());

        System.out.printf("rollout of 3 idle replicas took %.1f s%n", took.toMillis() / 1000.0);
        assertThat(oldUids).allSatisfy(uid -> assertThat(graceByUid.get(uid)).isEqualTo(30L));
        assertThat(servers())
                .allSatisfy(p -> assertThat(p.getSpec().getTerminationGracePeriodSeconds())
                        .isEqualTo(45L));
        // status follows the Pods by one reconciliation
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(client.resources(ModelDeployment.class)
                                .inNamespace(ns)
                                .withName("qwen")
                                .get()
                                .getStatus()
                                .roles()
                                .get(0)
                                .updated())
                        .isEqualTo(3));
    }

    @Test
    void aRolloutAndAScaleDownAtOnceNeverActOnTheSameReplica() {
        deployThreeServers(role("server"));
        String oldHash = hashOfServers();

        editServer(r -> new RoleSpec(
                r.name(),
                r.kind(),
                2,
                r.size(),
                "vllm/vllm-openai:v0.12.0",
                r.port(),
                r.resources(),
                r.extraArgs(),
                r.env(),
                r.command(),
                r.terminationGracePeriodSeconds(),
                r.nodeSelector(),
                r.tolerations(),
                r.retirement(),
                r.rollout(),
                r.template(),
                r.sharedMemory(),
                r.startupSeconds(),
                r.livenessSeconds(),
                r.partialPlacementSeconds(),
                r.disruption()));

        awaitRollout(() -> {
            List<Pod> pods = servers();
            return pods.size() == 2
                    && pods.stream()
                            .noneMatch(p ->
                                    oldHash.equals(p.getMetadata().getLabels().get(Labels.CONFIG_HASH)))
                    && pods.stream().allMatch(p -> p.getMetadata().getDeletionTimestamp() == null);
        });
        assertThat(client.v1().events().inNamespace(ns).list().getItems())
                .anyMatch(e -> "Completed".equals(e.getReason()));
        // replica 2 left through the retirement protocol, so the rollout replaced only the two that stay
        assertThat(rolloutSteps()).hasSize(2).noneMatch(e -> e.getMessage().startsWith("replacing replica 2 "));
    }

    /** One replica of two Pods at the old configuration, rolling out with a long stream on its leader. */
    private LoadGenerator rollingOutABusyTwoPodReplica() {
        client.resource(deployment("qwen", "SGLang")
                        .router("llm-d-router")
                        .namespace(ns)
                        .role(role("server").size(2).image("lmsysorg/sglang:v0.5.5"))
                        .build())
                .create();
        await().atMost(Duration.ofSeconds(30)).until(() -> router.selects("qwen-server-r0-m0"));
        FakeEngine leader = world.kubelet().engine(ns, "qwen-server-r0-m0").orElseThrow();
        // 15 s of tokens: the rollout's retirement is draining it when a member is deleted
        LoadGenerator stream = new LoadGenerator(
                () -> Optional.of(new RouteTarget("qwen-server-r0-m0", leader.uri(""))),
                1,
                150,
                Duration.ofMillis(100));
        CompletableFuture.runAsync(stream::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> leader.inFlight() == 1);
        editServer(r -> Specs.withImage(r, "lmsysorg/sglang:v0.5.6"));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> retirement().filter(r -> "Busy".equals(r.reason())).isPresent());
        return stream;
    }

    /** The role's one replica is back at the new configuration, Ready and selected, with nothing of the old one left. */
    private boolean replacedAtTheNewConfiguration(String oldHash) {
        List<Pod> pods = servers();
        return pods.size() == 2
                && pods.stream()
                        .noneMatch(
                                p -> oldHash.equals(p.getMetadata().getLabels().get(Labels.CONFIG_HASH)))
                && pods.stream().allMatch(p -> p.getMetadata().getDeletionTimestamp() == null)
                && router.selects("qwen-server-r0-m0");
    }

    private void assertStreamCompletedAndNothingKilled(LoadGenerator stream) {
        await().atMost(Duration.ofSeconds(10)).until(() -> stream.requests().size() == 1);
        assertThat(stream.requests().get(0).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(world.kubelet().terminations())
                .filteredOn(t -> t.namespace().equals(ns))
                .allSatisfy(t -> assertThat(t.killed()).isFalse());
        stream.close();
    }

    /**
     * Someone deletes a member of the replica a rollout is draining: the retirement aborts, and what is left is retired
     * at once, with no cool-down and no budget waited out, so the role serves again at its new configuration. A leader
     * left alone still answers for what it holds: it is read, its stream ends, and it is proven idle. Followers left
     * alone hold nothing any client can reach, and go as they are. The operator's clock never moves here.
     */
    @ParameterizedTest(name = "its {0} deleted")
    @CsvSource({"leader, qwen-server-r0-m0, LeaderGone", "follower, qwen-server-r0-m1, ProvenIdle"})
    void aTwoPodReplicaThatLosesAMemberDuringItsRolloutIsRetiredWithoutWaiting(
            String member, String pod, String howTheRestWent) {
        LoadGenerator stream = rollingOutABusyTwoPodReplica();
        String oldHash = hashOfServers();

        client.pods().inNamespace(ns).withName(pod).delete();

        await().atMost(Duration.ofSeconds(30))
                .until(() -> retirement()
                        .filter(r -> "TerminatedOutsideOperator".equals(r.reason()))
                        .isPresent());
        awaitRollout(() -> replacedAtTheNewConfiguration(oldHash));
        assertThat(RecordedEvents.occurrences(client, ns))
                .extracting(Event::getReason)
                .contains(howTheRestWent);
        assertStreamCompletedAndNothingKilled(stream);
    }

    private Optional<RetirementStatus> retirement() {
        return Optional.ofNullable(client.resources(ModelDeployment.class)
                        .inNamespace(ns)
                        .withName("qwen")
                        .get())
                .map(ModelDeployment::getStatus)
                .flatMap(s -> s.retirements() == null
                        ? Optional.empty()
                        : s.retirements().stream().findFirst());
    }

    private String uidOf(String pod) {
        return client.pods().inNamespace(ns).withName(pod).get().getMetadata().getUid();
    }

    /**
     * A scale-down that cannot prove its replica idle aborts (here every engine's page lacks a gauge, so the choice
     * falls to the highest ordinal and its reads never count): the replica it kept stays surplus, the rollout turns over
     * the two that stay, and the kept one is retried by the retirement protocol, never replaced.
     */
    @Test
    void anAbortedScaleDownNeverStopsARolloutAndItsSurplusReplicaIsRetiredNotReplaced() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace(ns)
                        .role(role("server").replicas(3))
                        .build())
                .create();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> servers().size() == 3
                        && servers().stream()
                                .allMatch(p -> p.getStatus() != null
                                        && "Running".equals(p.getStatus().getPhase())));
        String oldHash = hashOfServers();
        String surplusUid = uidOf("qwen-server-r2-m0");
        List<String> members = List.of("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
        members.forEach(
                pod -> world.kubelet().engine(ns, pod).orElseThrow().faults().missingGauge(UNREAD_GAUGE));
        Specs.scale(client, ns, "qwen", "server", 2);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> retirement()
                        .filter(r -> r.replicaOrdinal() == 2 && !"Aborted".equals(r.state()))
                        .isPresent());
        clock.advance(Budgets.WHOLE);
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        retirement().filter(r -> "Aborted".equals(r.state())).isPresent());
        // the replicas that stay answer whole again, so their own drain hooks can tell them idle in the rollout
        members.subList(0, 2)
                .forEach(pod ->
                        world.kubelet().engine(ns, pod).orElseThrow().faults().missingGauge(null));

        editServer(r -> Specs.withImage(r, "vllm/vllm-openai:v0.12.0"));

        awaitRollout(() -> {
            List<Pod> pods = servers();
            return pods.size() == 3
                    && pods.stream().allMatch(p -> p.getMetadata().getDeletionTimestamp() == null)
                    && pods.stream()
                                    .filter(p -> !oldHash.equals(
                                            p.getMetadata().getLabels().get(Labels.CONFIG_HASH)))
                                    .count()
                            == 2;
        });
        assertThat(uidOf("qwen-server-r2-m0")).isEqualTo(surplusUid);
        assertThat(client.pods()
                        .inNamespace(ns)
                        .withName("qwen-server-r2-m0")
                        .get()
                        .getMetadata()
                        .getLabels())
                .containsEntry(Labels.CONFIG_HASH, oldHash);
        assertThat(rolloutSteps()).hasSize(2).noneMatch(e -> e.getMessage().startsWith("replacing replica 2 "));

        clock.advance(Duration.ofMinutes(5));
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(retirement()).hasValueSatisfying(r -> {
                    assertThat(r.replicaOrdinal()).isEqualTo(2);
                    assertThat(r.cause()).isEqualTo("Surplus");
                    assertThat(r.state()).isIn("Withdrawing", "Draining");
                }));
    }
}
