package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LoadGenerator;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The control plane failing under a retirement: kube-apiserver gone for a while, and etcd's history compacted under
 * the operator's watches. The retirement waits for the API server, finishes once it is back, and cuts nothing.
 */
class ClusterOutageIT {
    private static final String NS = "outage";
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

    @Test
    void theApiServerGoneForTwentySecondsMidRetirementHoldsItAndItFinishesOnceBack() throws Exception {
        List<CompletableFuture<LoadGenerator.Request>> streams = retireOneOfTwoHeldByStreams("down");

        world.plane.restartApiServer(Duration.ofSeconds(20));

        awaitTheRetirementDone("down");
        assertThat(streams)
                .allSatisfy(s -> assertThat(s.get(60, TimeUnit.SECONDS).outcome())
                        .as(s.get().why())
                        .isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("down-"))
                .singleElement()
                .satisfies(t -> assertThat(t.killed()).as("killed at the grace").isFalse());
    }

    @Test
    void etcdCompactedUnderTheOperatorsWatchesMidRetirementMeansA410RelistAndTheRetirementFinishes() throws Exception {
        List<CompletableFuture<LoadGenerator.Request>> streams = retireOneOfTwoHeldByStreams("compacted");
        String before = admin.pods().inNamespace(NS).list().getMetadata().getResourceVersion();
        // a write after that version, so that it is behind what the API server's cache starts from
        admin.pods()
                .inNamespace(NS)
                .withName(Names.pod("compacted", "server", 0, 0))
                .edit(p -> {
                    p.getMetadata().getAnnotations().put("example.com/touched", "yes");
                    return p;
                });

        world.plane.compactEtcd();
        world.plane.restartApiServer(Duration.ZERO);

        assertThat(watchFrom(before).get(30, TimeUnit.SECONDS))
                .as("a watch from before the compaction")
                .isEqualTo(410);
        awaitTheRetirementDone("compacted");
        assertThat(streams)
                .allSatisfy(s -> assertThat(s.get(60, TimeUnit.SECONDS).outcome())
                        .as(s.get().why())
                        .isEqualTo(LoadGenerator.Outcome.COMPLETED));
        assertThat(node.kubelet().terminations())
                .filteredOn(t -> t.pod().startsWith("compacted-"))
                .singleElement()
                .satisfies(t -> assertThat(t.killed()).as("killed at the grace").isFalse());
    }

    /** Two replicas, each streaming 30 s, scaled to one: the retirement holds on its stream. */
    private static List<CompletableFuture<LoadGenerator.Request>> retireOneOfTwoHeldByStreams(String name) {
        admin.resource(deployment(name, "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await("two ready")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(world.podsOf(name).stream()
                                .filter(Readiness::isPodReady)
                                .count())
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo(2));
        // before the 30 s streams start: a withdrawal is confirmed on the EndpointSlices, and after the other case's
        // outage kube-controller-manager's watches come back on client-go's back-off (seen to take 50 s), writing no
        // slice until then
        await("the Service's slice lists both")
                .atMost(Duration.ofSeconds(90))
                .until(() -> admin
                                .discovery()
                                .v1()
                                .endpointSlices()
                                .inNamespace(NS)
                                .withLabel("kubernetes.io/service-name", Names.roleService(name, "server"))
                                .list()
                                .getItems()
                                .stream()
                                .flatMap(slice ->
                                        slice.getEndpoints() == null ? Stream.empty() : slice.getEndpoints().stream())
                                .filter(endpoint -> endpoint.getConditions() != null
                                        && Boolean.TRUE.equals(
                                                endpoint.getConditions().getReady()))
                                .count()
                        == 2);
        List<CompletableFuture<LoadGenerator.Request>> streams = new ArrayList<>();
        for (Pod pod : world.podsOf(name)) {
            LoadGenerator one = new LoadGenerator(ClusterWorld.straightTo(pod), 1, 300, Duration.ofMillis(100));
            streams.add(CompletableFuture.supplyAsync(one::send));
        }
        await("both streaming")
                .atMost(Duration.ofSeconds(10))
                .until(() -> IntStream.range(0, 2)
                                .map(ordinal -> node.kubelet()
                                        .engine(NS, Names.pod(name, "server", ordinal, 0))
                                        .map(FakeEngine::inFlight)
                                        .orElse(0))
                                .sum()
                        == 2);
        Specs.scale(admin, NS, name, "server", 1);
        await("the retirement held by its stream")
                .atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(world.retirements(name))
                        .as(ClusterState.describe(admin, NS))
                        .anyMatch(r -> "Draining".equals(r.state()) && "Busy".equals(r.reason())));
        return streams;
    }

    private static void awaitTheRetirementDone(String name) {
        await("one replica left, the retirement done")
                .atMost(Duration.ofSeconds(120))
                .untilAsserted(() -> {
                    assertThat(world.podsOf(name))
                            .as(ClusterState.describe(admin, NS))
                            .hasSize(1);
                    assertThat(world.retirements(name)).isEmpty();
                });
    }

    /** How a watch of the namespace's Pods from {@code resourceVersion} ends: the HTTP code of its error, 0 for none. */
    private static CompletableFuture<Integer> watchFrom(String resourceVersion) {
        CompletableFuture<Integer> ended = new CompletableFuture<>();
        Watch watch = admin.pods()
                .inNamespace(NS)
                .withResourceVersion(resourceVersion)
                .watch(new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, Pod pod) {}

                    @Override
                    public void onClose(WatcherException cause) {
                        ended.complete(
                                cause.isHttpGone()
                                        ? 410
                                        : cause.asClientException().getCode());
                    }

                    @Override
                    public void onClose() {
                        ended.complete(0);
                    }
                });
        return ended.whenComplete((code, e) -> watch.close());
    }
}
