package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.ServiceTarget;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

/**
 * One case of node maintenance in a {@link ClusterWorld}: a pair of Nodes of its own, a deployment of four replicas
 * with two on each, and the second Node drained or marked for removal under streaming load. Where the replicas land is
 * steered with a taint of the test's own, which is no sign of maintenance.
 */
final class NodeMaintenance {
    /** A taint that keeps new Pods off a Node without saying that the Node is going away. */
    private static final Taint HOLD = new Taint("NoSchedule", "test.ebb.dev/hold", null, null);
    /** The cluster autoscaler's taint on a node it removes (utils/taints/taints.go), with the time as its value. */
    private static final String TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler";

    private static final String PAIR = "test.ebb.dev/pair";
    private static final Duration TOKEN = Duration.ofMillis(100);
    private static final int CLIENTS = 4;
    /** Generations of the steady load: 4 s. */
    private static final int LOAD_TOKENS = 40;

    /** How the second Node goes away. */
    enum Action {
        /** {@code kubectl drain}: a cordon, then an eviction of each Pod, retried while a budget refuses it. */
        DRAIN,
        /** The cluster autoscaler's taint, then, once the replicas have moved, {@code kubectl drain} as the autoscaler's own drain. */
        AUTOSCALER_TAINT
    }

    record Pair(ClusterNode stays, ClusterNode leaving) {}

    /** What runs the four replicas: a ModelDeployment, or a Deployment as the engines' own guides write one. */
    interface Workload {
        /** Creates it with this many replicas, on the Nodes of the pair only. */
        void create(ClusterWorld world, String name, int replicas) throws Exception;

        void scale(ClusterWorld world, String name, int replicas) throws Exception;

        /** The Service its clients reach it through. */
        String service(String name);

        /** Its engine Pods. */
        List<Pod> pods(ClusterWorld world, String name);
    }

    /** The operator's deployment of one role, {@code server}. */
    static Workload modelDeployment(Specs.Role role) {
        return new Workload() {
            @Override
            public void create(ClusterWorld world, String name, int replicas) {
                world.admin
                        .resource(deployment(name, "vLLM")
                                .namespace(world.namespace)
                                .role(role.replicas(replicas).nodeSelector(Map.of(PAIR, name)))
                                .scaling("server", replicas)
                                .build())
                        .create();
            }

            @Override
            public void scale(ClusterWorld world, String name, int replicas) throws Exception {
                world.kubectl("scale", "md/" + name, "--replicas=" + replicas, "-n", world.namespace);
            }

            @Override
            public String service(String name) {
                return Names.roleService(name, "server");
            }

            @Override
            public List<Pod> pods(ClusterWorld world, String name) {
                return world.admin
                        .pods()
                        .inNamespace(world.namespace)
                        .withLabel(Labels.DEPLOYMENT, name)
                        .withLabel(Labels.ROLE, "server")
                        .list()
                        .getItems();
            }
        };
    }

    /**
     * What one case came to.
     *
     * @param load the steady load's requests through the role's Service
     * @param longStreams one stream on each replica of the Node that goes, sent just before it went
     * @param leastReady the fewest replicas ready and serving, sampled every 200 ms
     * @param took from the start of the action until the Node was drained
     */
    record Outcome(
            String name,
            String drainOutput,
            List<LoadGenerator.Request> load,
            List<LoadGenerator.Request> longStreams,
            long leastReady,
            Duration took) {
        List<LoadGenerator.Request> cut() {
            return load.stream()
                    .filter(r -> r.outcome() == LoadGenerator.Outcome.CUT)
                    .toList();
        }

        long completed() {
            return load.stream()
                            .filter(r -> r.outcome() == LoadGenerator.Outcome.COMPLETED)
                            .count()
                    + longStreams.stream()
                            .filter(r -> r.outcome() == LoadGenerator.Outcome.COMPLETED)
                            .count();
        }

        long cutCount() {
            return cut().size()
                    + longStreams.stream()
                            .filter(r -> r.outcome() == LoadGenerator.Outcome.CUT)
                            .count();
        }

        String summary() {
            return String.format(
                    Locale.ROOT,
                    "%s: node gone in %.1f s, %d generations completed, %d cut, %d ready at the least",
                    name,
                    took.toMillis() / 1000.0,
                    completed(),
                    cutCount(),
                    leastReady);
        }
    }

    private final ClusterWorld world;
    private final String name;
    private final Workload workload;
    private final Pair pair;
    private final Action action;
    private final int longStreamTokens;

    private NodeMaintenance(
            ClusterWorld world, String name, Workload workload, Pair pair, Action action, int longStreamSeconds) {
        this.world = world;
        this.name = name;
        this.workload = workload;
        this.pair = pair;
        this.action = action;
        this.longStreamTokens = (int) (longStreamSeconds * 1000 / TOKEN.toMillis());
    }

    /** Four replicas, two on the Node that stays and two on the one that goes, all ready and in the Service. */
    static NodeMaintenance placed(
            ClusterWorld world, String name, Workload workload, Action action, int longStreamSeconds) throws Exception {
        Pair pair = new Pair(world.addNode("node-" + name + "-a"), world.addNode("node-" + name + "-b"));
        NodeMaintenance maintenance = new NodeMaintenance(world, name, workload, pair, action, longStreamSeconds);
        for (ClusterNode node : List.of(pair.stays(), pair.leaving())) {
            maintenance.editNode(
                    node,
                    n -> new NodeBuilder(n)
                            .editMetadata()
                            .addToLabels(PAIR, name)
                            .endMetadata()
                            .build());
        }
        maintenance.hold(pair.leaving(), true);
        workload.create(world, name, 2);
        await(name + ": two ready on the first node")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(maintenance.readyServing())
                        .as(ClusterState.describe(world.admin, world.namespace))
                        .isEqualTo(2));
        maintenance.hold(pair.leaving(), false);
        maintenance.hold(pair.stays(), true);
        workload.scale(world, name, 4);
        await(name + ": four ready, two on each node")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> {
                    assertThat(maintenance.readyServing())
                            .as(ClusterState.describe(world.admin, world.namespace))
                            .isEqualTo(4);
                    assertThat(maintenance.podsOnTheNodeThatGoes()).hasSize(2);
                });
        maintenance.hold(pair.stays(), false);
        ServiceTarget service = maintenance.service();
        await(name + ": four in the Service")
                .atMost(Duration.ofSeconds(30))
                .until(() -> IntStream.range(0, 16)
                                .mapToObj(i -> service.pick())
                                .flatMap(Optional::stream)
                                .map(RouteTarget::pod)
                                .distinct()
                                .count()
                        == 4);
        return maintenance;
    }

    /** Pods of a workload are placed on the pair's Nodes only. */
    static Map<String, String> pairSelector(String name) {
        return Map.of(PAIR, name);
    }

    String name() {
        return name;
    }

    Pair pair() {
        return pair;
    }

    /** The first words of the Event that tells the move of this replica off the Node that goes. */
    String moveStartedFor(int ordinal) {
        return "moving replica " + ordinal + " of role server: its node "
                + pair.leaving().name() + " is ";
    }

    /** Starts the load, the long streams and the action, and completes once the Node is drained and the load is in. */
    CompletableFuture<Outcome> startUnderLoad() {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return underLoad();
                    } catch (Exception e) {
                        throw new CompletionException(name + " failed", e);
                    }
                },
                Executors.newSingleThreadExecutor(DaemonThreads.named("maintenance-" + name)));
    }

    private Outcome underLoad() throws Exception {
        ScheduledExecutorService sampler =
                Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ready-" + name));
        AtomicLong leastReady = new AtomicLong(Long.MAX_VALUE);
        try (LoadGenerator load = new LoadGenerator(service(), CLIENTS, LOAD_TOKENS, TOKEN)) {
            load.start(Duration.ofMinutes(8));
            List<Pod> going = podsOnTheNodeThatGoes();
            List<CompletableFuture<LoadGenerator.Request>> longStreams = going.stream()
                    .map(pod -> CompletableFuture.supplyAsync(
                            () -> new LoadGenerator(ClusterWorld.straightTo(pod), 1, longStreamTokens, TOKEN).send()))
                    .toList();
            await(name + ": the long streams under way")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> going.stream()
                            .allMatch(pod -> pair.leaving()
                                    .kubelet()
                                    .engine(world.namespace, pod.getMetadata().getName())
                                    .map(e -> e.inFlight() > 0)
                                    .orElse(false)));
            sampler.scheduleAtFixedRate(
                    () -> leastReady.accumulateAndGet(readyServing(), Math::min), 0, 200, TimeUnit.MILLISECONDS);
            Instant started = Instant.now();
            if (action == Action.AUTOSCALER_TAINT) {
                markForRemoval(pair.leaving());
                await(name + ": no replica left on the node marked for removal")
                        .atMost(Duration.ofMinutes(5))
                        .until(() -> podsOnTheNodeThatGoes().isEmpty());
            }
            String output = world.kubectl("drain", pair.leaving().name(), "--ignore-daemonsets", "--timeout=300s");
            Duration took = Duration.between(started, Instant.now());
            List<LoadGenerator.Request> finished = longStreams.stream()
                    .map(f -> f.orTimeout(90, TimeUnit.SECONDS).join())
                    .toList();
            load.stop(Duration.ofSeconds(60));
            return new Outcome(name, output, load.requests(), finished, leastReady.get(), took);
        } finally {
            sampler.shutdownNow();
        }
    }

    private ServiceTarget service() {
        return new ServiceTarget(world.endpointSlices(), world.namespace, workload.service(name));
    }

    List<Pod> podsOnTheNodeThatGoes() {
        return workload.pods(world, name).stream()
                .filter(p -> pair.leaving().name().equals(p.getSpec().getNodeName()))
                .toList();
    }

    /** The deployment's Pods the scheduler found no node for. */
    List<Pod> podsWaitingForRoom() {
        return workload.pods(world, name).stream()
                .filter(p -> p.getSpec().getNodeName() == null)
                .filter(p -> p.getStatus() != null
                        && p.getStatus().getConditions().stream()
                                .anyMatch(c ->
                                        "PodScheduled".equals(c.getType()) && "Unschedulable".equals(c.getReason())))
                .toList();
    }

    /** Replicas that take new requests: ready, not terminating, and not withdrawn where the operator withdraws them. */
    long readyServing() {
        return workload.pods(world, name).stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(Readiness::isPodReady)
                .filter(p ->
                        !Labels.SERVING_NO.equals(p.getMetadata().getLabels().get(Labels.SERVING)))
                .count();
    }

    private void markForRemoval(ClusterNode node) {
        editTaints(
                node,
                taints -> taints.add(new Taint(
                        "NoSchedule",
                        TO_BE_DELETED,
                        null,
                        Long.toString(Instant.now().getEpochSecond()))));
    }

    /** Puts the test's taint on the Node or takes it off, leaving every other taint as it is. */
    private void hold(ClusterNode node, boolean held) {
        editTaints(node, taints -> {
            taints.removeIf(t -> HOLD.getKey().equals(t.getKey()));
            if (held) {
                taints.add(HOLD);
            }
        });
    }

    private void editTaints(ClusterNode node, Consumer<List<Taint>> change) {
        editNode(node, n -> {
            List<Taint> taints = new ArrayList<>(
                    n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints());
            change.accept(taints);
            return new NodeBuilder(n).editSpec().withTaints(taints).endSpec().build();
        });
    }

    /**
     * Tried again when the edit meets a write of the control plane's (node lifecycle adds and removes the unschedulable
     * taint, and writes a Node just registered), which the edit's version lock refuses with a conflict.
     */
    private void editNode(ClusterNode node, UnaryOperator<Node> edit) {
        await("an edit of " + node.name())
                .atMost(Duration.ofSeconds(20))
                .ignoreExceptions()
                .untilAsserted(() -> world.admin.nodes().withName(node.name()).edit(edit));
    }
}
