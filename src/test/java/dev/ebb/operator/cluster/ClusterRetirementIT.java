package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.packaging.PackagedManifests;
import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterRenderer;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.ServiceTarget;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Replicas taken away under streaming load on the real control plane, by the packaged operator under its own RBAC:
 * the real scheduler places the Pods, the real API server runs graceful deletion, and the node agent runs each Pod's
 * preStop hook and signals as the kubelet does. No generation may be cut.
 */
class ClusterRetirementIT {
    private static final String NS = "retire";
    private static ClusterWorld world;
    private static KubernetesClient admin;
    private static ClusterNode node;

    @BeforeAll
    static void start() throws Exception {
        world = ClusterWorld.start(NS, NS);
        admin = world.admin;
        node = world.node;
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    /**
     * The real kube-scheduler places one of two 8-GPU members on the node of 8 and finds no room for the other. The
     * replica is told, and once it has held the node for its role's bound it is deleted whole: a Pod that waited for
     * those GPUs meanwhile gets them, and the replica comes back held behind its scheduling gate.
     */
    @Test
    void aReplicaTheSchedulerPlacesOnlyInPartIsToldThenReleasedSoThatAnotherWorkloadGetsItsNode() {
        ResourceRequirements eightGpus = new ResourceRequirementsBuilder()
                .addToLimits(ClusterNode.ACCELERATOR, new Quantity("8"))
                .build();
        admin.resource(deployment("half", "vLLM")
                        .namespace(NS)
                        .role(role("server")
                                .size(2)
                                .resources(eightGpus)
                                .partialPlacementSeconds(60)
                                .nodeSelector(java.util.Map.of("kubernetes.io/hostname", node.name())))
                        .build())
                .create();
        Pod other = new PodBuilder()
                .withNewMetadata()
                .withName("other-workload")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("main")
                .withImage("busybox")
                .withResources(eightGpus)
                .endContainer()
                .withNodeSelector(java.util.Map.of("kubernetes.io/hostname", node.name()))
                .endSpec()
                .build();
        try {
            await("the replica reported partly scheduled")
                    .atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> {
                        assertThat(RecordedEvents.occurrences(admin, NS))
                                .as(ClusterState.describe(admin, NS))
                                .filteredOn(e -> "ReplicaPartlyScheduled".equals(e.getReason()))
                                .singleElement()
                                .satisfies(e -> assertThat(e.getMessage())
                                        .startsWith("replica 0 of role server is partly scheduled: "
                                                + Names.pod("half", "server", 0, 0) + " on " + node.name()
                                                + " hold their nodes' accelerators while "
                                                + Names.pod("half", "server", 0, 1) + " cannot be placed (")
                                        .contains("Insufficient " + ClusterNode.ACCELERATOR));
                        assertThat(admin.resources(ModelDeployment.class)
                                        .inNamespace(NS)
                                        .withName("half")
                                        .get()
                                        .getStatus()
                                        .roles()
                                        .get(0)
                                        .partlyScheduled())
                                .isEqualTo(1);
                    });
            admin.pods().inNamespace(NS).resource(other).create();

            await("released, the waiting Pod placed, the replica held back")
                    .atMost(Duration.ofSeconds(120))
                    .untilAsserted(() -> {
                        assertThat(RecordedEvents.occurrences(admin, NS))
                                .as(ClusterState.describe(admin, NS))
                                .filteredOn(e -> "PartlyPlacedReplicaReleased".equals(e.getReason()))
                                .singleElement()
                                .satisfies(e ->
                                        assertThat(e.getMessage()).contains("held back from the scheduler for 60 s"));
                        assertThat(admin.pods()
                                        .inNamespace(NS)
                                        .withName("other-workload")
                                        .get()
                                        .getSpec()
                                        .getNodeName())
                                .isEqualTo(node.name());
                        assertThat(world.podsOf("half")).hasSize(2).allSatisfy(p -> {
                            assertThat(p.getSpec().getSchedulingGates())
                                    .extracting(g -> g.getName())
                                    .containsExactly("serving.ebb.dev/held-back");
                            assertThat(p.getSpec().getNodeName()).isNull();
                        });
                        assertThat(admin.resources(ModelDeployment.class)
                                        .inNamespace(NS)
                                        .withName("half")
                                        .get()
                                        .getStatus()
                                        .roles()
                                        .get(0)
                                        .heldBack())
                                .isEqualTo(2);
                    });
        } finally {
            admin.resources(ModelDeployment.class)
                    .inNamespace(NS)
                    .withName("half")
                    .delete();
            admin.pods()
                    .inNamespace(NS)
                    .withName("other-workload")
                    .withGracePeriod(0)
                    .delete();
        }
    }

    @Test
    void kubectlDeletePodWhileItStreamsLetsTheStreamFinish() throws Exception {
        admin.resource(deployment("del", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(readyPods("del"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        Pod victim = admin.pods()
                .inNamespace(NS)
                .withName(Names.pod("del", "server", 0, 0))
                .get();
        LoadGenerator stream = new LoadGenerator(ClusterWorld.straightTo(victim), 1, 150, Duration.ofMillis(100));
        CompletableFuture<LoadGenerator.Request> fifteenSeconds = CompletableFuture.supplyAsync(stream::send);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> node.kubelet()
                        .engine(NS, victim.getMetadata().getName())
                        .map(e -> e.inFlight() > 0)
                        .orElse(false));

        admin.pods().inNamespace(NS).withName(victim.getMetadata().getName()).delete();

        LoadGenerator.Request request = fifteenSeconds.get(60, TimeUnit.SECONDS);
        assertThat(request.outcome()).as(request.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        await("the Pod gone and replaced").atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            Pod now = admin.pods()
                    .inNamespace(NS)
                    .withName(victim.getMetadata().getName())
                    .get();
            assertThat(now == null
                            || !now.getMetadata()
                                    .getUid()
                                    .equals(victim.getMetadata().getUid()))
                    .as(ClusterState.describe(admin, NS))
                    .isTrue();
            assertThat(readyPods("del")).isEqualTo(2);
        });
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().equals(victim.getMetadata().getName()))
                .singleElement()
                .satisfies(t -> assertThat(t.killed()).isFalse());
    }

    @Test
    void kubectlScaleTakesTwoOfFourAwayUnderLoadWithoutARouterAndCutsNothing() throws Exception {
        admin.resource(deployment("shrink", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(4))
                        .scaling("server", 4)
                        .build())
                .create();
        ServiceTarget service = new ServiceTarget(world.endpointSlices(), NS, Names.roleService("shrink", "server"));
        await("four ready and in the Service").atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
            assertThat(readyPods("shrink")).as(ClusterState.describe(admin, NS)).isEqualTo(4);
            assertThat(readyEndpoints(service, 4)).isTrue();
        });
        // generations of 2 to 6 s, four at a time, spread by the Service over every replica
        Random lengths = new Random(7);
        try (LoadGenerator load =
                new LoadGenerator(service, 4, () -> 20 + lengths.nextInt(40), Duration.ofMillis(100))) {
            load.start(Duration.ofMinutes(3));
            await("every replica streaming")
                    .atMost(Duration.ofSeconds(20))
                    .until(() -> IntStream.range(0, 4)
                            .allMatch(ordinal -> node.kubelet()
                                    .engine(NS, Names.pod("shrink", "server", ordinal, 0))
                                    .map(e -> e.inFlight() > 0)
                                    .orElse(false)));

            assertThat(world.kubectl("scale", "md/shrink", "--replicas=2", "-n", NS))
                    .contains("scaled");

            await("two replicas left, the retirements done")
                    .atMost(Duration.ofSeconds(120))
                    .untilAsserted(() -> {
                        assertThat(world.podsOf("shrink"))
                                .as(ClusterState.describe(admin, NS))
                                .hasSize(2);
                        assertThat(world.retirements("shrink")).isEmpty();
                        assertThat(admin.resources(ModelDeployment.class)
                                        .inNamespace(NS)
                                        .withName("shrink")
                                        .get()
                                        .getStatus()
                                        .rolesSummary())
                                .isEqualTo("server 2/2");
                    });
            load.stop(Duration.ofSeconds(30));
            assertThat(load.requests())
                    .filteredOn(r -> r.outcome() != LoadGenerator.Outcome.COMPLETED)
                    .as("requests that did not complete")
                    .isEmpty();
            assertThat(load.count(LoadGenerator.Outcome.COMPLETED)).isGreaterThan(8);
        }
        assertThat(admin.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("shrink")
                        .get()
                        .getSpec()
                        .scaling()
                        .replicas())
                .isEqualTo(2);
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("shrink-"))
                .hasSize(2)
                .allSatisfy(
                        t -> assertThat(t.killed()).as("killed at the grace").isFalse());
    }

    @Test
    void aScaleDownThroughTheRouterTakesTwoOfFourAwayUnderLoadAndCutsNothing() throws Exception {
        admin.resource(deployment("routed", "vLLM")
                        .namespace(NS)
                        .router("vllm-router")
                        .role(role("server").replicas(4))
                        .build())
                .create();
        AtomicReference<FakeRouter> router = new AtomicReference<>();
        await("the router Pod running its router, routing to all four")
                .atMost(Duration.ofSeconds(120))
                .untilAsserted(() -> {
                    List<Pod> routerPods = admin.pods()
                            .inNamespace(NS)
                            .withLabel(RouterRenderer.COMPONENT, RouterRenderer.COMPONENT_ROUTER)
                            .withLabel(Labels.DEPLOYMENT, "routed")
                            .list()
                            .getItems();
                    assertThat(routerPods).as(ClusterState.describe(admin, NS)).hasSize(1);
                    Optional<FakeRouter> running = node.routers().of(routerPods.get(0));
                    assertThat(running).as("the router running in its Pod").isPresent();
                    router.set(running.get());
                    assertThat(router.get().selected()).hasSize(4);
                });
        Random lengths = new Random(11);
        try (LoadGenerator load =
                new LoadGenerator(router.get(), 4, () -> 20 + lengths.nextInt(40), Duration.ofMillis(100))) {
            load.start(Duration.ofMinutes(3));
            await("streaming").atMost(Duration.ofSeconds(20)).until(() -> inFlight("routed", 4) >= 3);

            Specs.scale(admin, NS, "routed", "server", 2);

            await("two replicas left, the retirements done")
                    .atMost(Duration.ofSeconds(120))
                    .untilAsserted(() -> {
                        assertThat(world.podsOf("routed").stream()
                                        .filter(p -> p.getMetadata().getLabels().containsKey(Labels.ROLE)))
                                .as(ClusterState.describe(admin, NS))
                                .hasSize(2);
                        assertThat(world.retirements("routed")).isEmpty();
                        assertThat(router.get().selected()).hasSize(2);
                    });
            load.stop(Duration.ofSeconds(30));
            assertThat(load.requests())
                    .filteredOn(r -> r.outcome() != LoadGenerator.Outcome.COMPLETED)
                    .as("requests that did not complete")
                    .isEmpty();
            assertThat(load.count(LoadGenerator.Outcome.COMPLETED)).isGreaterThan(8);
        }
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("routed-server-"))
                .hasSize(2)
                .allSatisfy(
                        t -> assertThat(t.killed()).as("killed at the grace").isFalse());
    }

    @Test
    void anImageRolloutUnderLoadReplacesEveryReplicaAndCutsNothing() throws Exception {
        admin.resource(deployment("roll", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        ServiceTarget service = new ServiceTarget(world.endpointSlices(), NS, Names.roleService("roll", "server"));
        await("two ready and in the Service")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(readyEndpoints(service, 2))
                        .as(ClusterState.describe(admin, NS))
                        .isTrue());
        List<String> before =
                world.podsOf("roll").stream().map(p -> p.getMetadata().getUid()).toList();
        try (LoadGenerator load = new LoadGenerator(service, 2, 30, Duration.ofMillis(100))) {
            load.start(Duration.ofMinutes(3));
            await("streaming").atMost(Duration.ofSeconds(20)).until(() -> inFlight("roll", 2) >= 1);

            Specs.editRole(admin, NS, "roll", "server", r -> Specs.withImage(r, "vllm/vllm-openai:v0.12.0"));

            await("both replaced at the new image and serving")
                    .atMost(Duration.ofSeconds(150))
                    .untilAsserted(() -> {
                        List<Pod> pods = world.podsOf("roll");
                        assertThat(pods)
                                .as(ClusterState.describe(admin, NS))
                                .hasSize(2)
                                .allSatisfy(p -> {
                                    assertThat(before)
                                            .doesNotContain(p.getMetadata().getUid());
                                    assertThat(p.getSpec()
                                                    .getContainers()
                                                    .get(0)
                                                    .getImage())
                                            .isEqualTo("vllm/vllm-openai:v0.12.0");
                                    assertThat(Readiness.isPodReady(p)).isTrue();
                                });
                        assertThat(world.retirements("roll")).isEmpty();
                    });
            load.stop(Duration.ofSeconds(30));
            assertThat(load.requests())
                    .filteredOn(r -> r.outcome() != LoadGenerator.Outcome.COMPLETED)
                    .as("requests that did not complete")
                    .isEmpty();
        }
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("roll-"))
                .hasSize(2)
                .allSatisfy(
                        t -> assertThat(t.killed()).as("killed at the grace").isFalse());
    }

    @Test
    void deletingTheModelDeploymentDrainsItsPodsAndTheGarbageCollectorTakesTheRest() throws Exception {
        admin.resource(deployment("gone", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        ServiceTarget service = new ServiceTarget(world.endpointSlices(), NS, Names.roleService("gone", "server"));
        await("two ready and in the Service")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(readyEndpoints(service, 2))
                        .as(ClusterState.describe(admin, NS))
                        .isTrue());
        LoadGenerator stream = new LoadGenerator(service, 1, 100, Duration.ofMillis(100));
        CompletableFuture<LoadGenerator.Request> tenSeconds = CompletableFuture.supplyAsync(stream::send);
        await("streaming").atMost(Duration.ofSeconds(10)).until(() -> inFlight("gone", 2) == 1);

        world.kubectl("delete", "md/gone", "-n", NS, "--wait=false");

        LoadGenerator.Request request = tenSeconds.get(60, TimeUnit.SECONDS);
        assertThat(request.outcome()).as(request.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        await("the ModelDeployment and all it owned gone")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> {
                    assertThat(admin.resources(ModelDeployment.class)
                                    .inNamespace(NS)
                                    .withName("gone")
                                    .get())
                            .as(ClusterState.describe(admin, NS))
                            .isNull();
                    assertThat(world.podsOf("gone")).isEmpty();
                    assertThat(admin.services().inNamespace(NS).list().getItems())
                            .noneMatch(svc -> svc.getMetadata().getName().startsWith("gone-"));
                });
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("gone-"))
                .hasSize(2)
                .allSatisfy(
                        t -> assertThat(t.killed()).as("killed at the grace").isFalse());
    }

    @Test
    void anOperatorKilledMidRetirementIsSucceededByOneThatResumesItWhenTheLeaseRunsOut() throws Exception {
        admin.resource(deployment("resume", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(readyPods("resume"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        // a 20 s generation on each replica, so whichever is chosen to leave is held by it
        List<CompletableFuture<LoadGenerator.Request>> streams = new ArrayList<>();
        for (Pod pod : world.podsOf("resume")) {
            LoadGenerator one = new LoadGenerator(ClusterWorld.straightTo(pod), 1, 200, Duration.ofMillis(100));
            streams.add(CompletableFuture.supplyAsync(one::send));
        }
        await("both streaming").atMost(Duration.ofSeconds(10)).until(() -> inFlight("resume", 2) == 2);
        Specs.scale(admin, NS, "resume", "server", 1);
        await("the retirement held by its stream")
                .atMost(Duration.ofSeconds(30))
                .until(() -> world.retirements("resume").stream()
                        .anyMatch(r -> "Draining".equals(r.state()) && "Busy".equals(r.reason())));
        RetirementStatus held = world.retirements("resume").get(0);

        PackagedOperator successor = world.killOperatorAndStartAnother();

        await("the successor finished the same retirement")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> {
                    assertThat(world.podsOf("resume"))
                            .as(ClusterState.describe(admin, NS))
                            .hasSize(1)
                            .allSatisfy(p -> assertThat(p.getMetadata().getName())
                                    .isNotEqualTo(Names.pod("resume", "server", held.replicaOrdinal(), 0)));
                    assertThat(world.retirements("resume")).isEmpty();
                });
        assertThat(streams)
                .allSatisfy(s -> assertThat(s.get(30, TimeUnit.SECONDS).outcome())
                        .as(s.get().why())
                        .isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(successor.log()).contains("ebb-operator-" + NS + "-2 leads");
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("resume-"))
                .singleElement()
                .satisfies(t -> assertThat(t.killed()).as("killed at the grace").isFalse());
    }

    @Test
    void pastAForbiddenExecTheRetirementHoldsSayingWhyAndGoesOnOnceTheGrantIsBack() throws Exception {
        admin.resource(deployment("denied", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(readyPods("denied"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        List<String> uids = world.podsOf("denied").stream()
                .map(p -> p.getMetadata().getUid())
                .toList();
        admin.rbac().clusterRoles().withName(PackagedManifests.CLUSTER_ROLE).edit(role -> {
            role.getRules().removeIf(rule -> rule.getResources().contains("pods/exec"));
            return role;
        });
        try {
            Specs.scale(admin, NS, "denied", "server", 1);

            await("the retirement held, saying the read was forbidden")
                    .atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> {
                        assertThat(world.retirements("denied"))
                                .as(ClusterState.describe(admin, NS))
                                .singleElement()
                                .satisfies(r -> {
                                    assertThat(r.reason()).isEqualTo("ReadFailed");
                                    assertThat(r.message()).containsIgnoringCase("forbidden");
                                });
                        assertThat(admin.v1().events().inNamespace(NS).list().getItems())
                                .anySatisfy(e -> assertThat(e.getReason() + ": " + e.getMessage())
                                        .startsWith("ReadFailed")
                                        .containsIgnoringCase("forbidden"));
                    });
            assertThat(world.podsOf("denied"))
                    .as("nothing deleted on a read it could not make")
                    .extracting(p -> p.getMetadata().getUid())
                    .containsExactlyInAnyOrderElementsOf(uids);
        } finally {
            DeployedOperator.installRbac(admin);
        }

        await("the retirement done once exec is granted again")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> {
                    assertThat(world.podsOf("denied"))
                            .as(ClusterState.describe(admin, NS))
                            .hasSize(1);
                    assertThat(world.retirements("denied")).isEmpty();
                });
    }

    /** Requests the deployment's first {@code replicas} engines hold right now. */
    private static int inFlight(String deployment, int replicas) {
        return IntStream.range(0, replicas)
                .map(ordinal -> node.kubelet()
                        .engine(NS, Names.pod(deployment, "server", ordinal, 0))
                        .map(FakeEngine::inFlight)
                        .orElse(0))
                .sum();
    }

    private static boolean readyEndpoints(ServiceTarget service, int count) {
        return IntStream.range(0, 4 * count)
                        .mapToObj(i -> service.pick())
                        .flatMap(Optional::stream)
                        .map(RouteTarget::pod)
                        .distinct()
                        .count()
                == count;
    }

    private static long readyPods(String deployment) {
        List<Pod> pods =
                admin.pods().inNamespace(NS).withLabel(Labels.ROLE).list().getItems();
        return pods.stream()
                .filter(p -> p.getMetadata().getName().startsWith(deployment + "-"))
                .filter(Readiness::isPodReady)
                .count();
    }
}
