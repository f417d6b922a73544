package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.SimClock;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The world of the retirement protocol's end-to-end tests: the operator, the simulated kubelet and endpoints, fake
 * engines and routers, and member reads through the real read script, with the helpers both halves of the tests
 * use. Budgets are reached by moving the operator's clock, never by waiting minutes. Two test classes share it so
 * that the test JVMs run them side by side.
 */
abstract class RetirementWorld {
    static final Duration CONVERGE = Duration.ofSeconds(30);

    @Inject
    KubernetesClient client;

    @Inject
    SimClock clock;

    @Inject
    MeterRegistry registry;

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    final String ns = world.namespace("retire");
    FakeRouter router;
    final List<FakeRouter> replicas = new ArrayList<>();

    /** A deployment with a router the operator can ask, and the fake router itself in front of its serving Pods. */
    void deployRouted(Specs.Deployment spec) {
        deployRouted(spec, RouterKind.LLM_D_ROUTER);
    }

    void deployRouted(Specs.Deployment spec, RouterKind kind) {
        router = world.routerInFrontOf(ns, "qwen", kind);
        client.resource(spec.router(kind.wireName()).namespace(ns).build()).create();
    }

    /** A deployment whose router runs as several replicas, each a fake router with its own view of the Pods. */
    void deployRoutedReplicas(Specs.Deployment spec, RouterKind kind, int count) {
        replicas.addAll(world.routersInFrontOf(ns, "qwen", kind, count));
        client.resource(spec.router(kind.wireName(), count).namespace(ns).build())
                .create();
    }

    void awaitServing(String... pods) {
        List<FakeRouter> inFront = replicas.isEmpty() ? List.of(router) : replicas;
        await().atMost(CONVERGE)
                .until(() -> inFront.stream().allMatch(r -> Stream.of(pods).allMatch(r::selects)));
    }

    void scale(String role, int replicas) {
        Specs.scale(client, ns, "qwen", role, replicas);
    }

    Optional<RetirementStatus> retirement() {
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

    Optional<RetirementStatus> retirementOf(int ordinal) {
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

    void awaitRetirement(String state, String reason) {
        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(retirement()).hasValueSatisfying(r -> {
                    assertThat(r.state()).isEqualTo(state);
                    assertThat(r.reason()).isEqualTo(reason);
                }));
    }

    /** Held for this reason until the phase's budget is spent, then aborted for it. */
    void holdsThenAbortsAtBudget(String state, String reason, Duration budget) {
        awaitRetirement(state, reason);
        clock.advance(budget);
        awaitRetirement("Aborted", reason);
    }

    Pod pod(String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    boolean gone(String name) {
        return pod(name) == null;
    }

    FakeEngine engine(String pod) {
        return world.kubelet().engine(ns, pod).orElseThrow();
    }

    /** A streaming request sent straight to one Pod's engine, bypassing every router: work the target holds. */
    LoadGenerator longRequestTo(String pod, int tokens) {
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
    void busierThanTheTarget(String pod) {
        busierThanTheTarget(pod, 400);
    }

    void busierThanTheTarget(String pod, int tokens) {
        FakeEngine engine = engine(pod);
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(pod, engine.uri(""))), 2, tokens, Duration.ofMillis(100));
        load.start(Duration.ofSeconds(1));
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() >= 2);
    }

    /** The ordinal the retirement under way chose. */
    int retiringOrdinal() {
        await().atMost(CONVERGE).until(() -> retirement().isPresent());
        return retirement().orElseThrow().replicaOrdinal();
    }

    void assertKeptAndServing(String name, String uid) {
        await().atMost(CONVERGE).untilAsserted(() -> {
            Pod pod = pod(name);
            assertThat(pod).isNotNull();
            assertThat(pod.getMetadata().getUid()).isEqualTo(uid);
            assertThat(pod.getMetadata().getDeletionTimestamp()).isNull();
            assertThat(pod.getMetadata().getLabels()).containsEntry(Labels.SERVING, Labels.SERVING_YES);
        });
    }

    List<String> eventReasons() {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .map(Event::getReason)
                .toList();
    }

    /** A deployment without a router: clients reach its Pods through the role's Service alone. */
    void deployUnrouted(int replicas) {
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

    void refusesSplitReplicas(String engine) {
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

    void relabel(String pod, String key, String value) {
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
