package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Node maintenance on the real control plane, where evictions and disruption budgets are the API server's own. Each
 * case has a pair of Nodes and a deployment of four replicas, two on each, under streaming load with a stream twice the
 * grace on each replica of the Node that goes; the cases run at once, and the operator is killed and replaced while
 * they do.
 */
class ClusterNodeMaintenanceIT {
    private static final String NS = "maintenance";
    private static final int GRACE = 15;
    private static ClusterWorld world;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() throws Exception {
        world = ClusterWorld.start(NS, NS);
        admin = world.admin;
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    private static NodeMaintenance maintenance(
            String name, Specs.Role role, NodeMaintenance.Action action, int longStreamSeconds) throws Exception {
        return NodeMaintenance.placed(
                world, name, NodeMaintenance.modelDeployment(role.grace(GRACE)), action, longStreamSeconds);
    }

    @Test
    void replicasOnANodeGoingAwayMoveThroughTheProtocolWhileEvictionsCutWhatOutlastsTheGrace() throws Exception {
        NodeMaintenance moved =
                maintenance("moved", Specs.role("server").drainSeconds(120), NodeMaintenance.Action.DRAIN, 30);
        NodeMaintenance surged = maintenance(
                "surged", Specs.role("server").drainSeconds(120).maxSurge(1), NodeMaintenance.Action.DRAIN, 30);
        NodeMaintenance evicted =
                maintenance("evicted", Specs.role("server").disruption(1, "Evict"), NodeMaintenance.Action.DRAIN, 30);
        NodeMaintenance full = maintenance(
                "full",
                Specs.role("server")
                        .drainSeconds(120)
                        .resources(new ResourceRequirementsBuilder()
                                .addToLimits(ClusterNode.ACCELERATOR, new Quantity("4"))
                                .build()),
                NodeMaintenance.Action.DRAIN,
                30);
        NodeMaintenance autoscaled = maintenance(
                "autoscaled", Specs.role("server").drainSeconds(120), NodeMaintenance.Action.AUTOSCALER_TAINT, 30);
        NodeMaintenance handedBack =
                maintenance("handback", Specs.role("server").drainSeconds(30), NodeMaintenance.Action.DRAIN, 70);
        List<NodeMaintenance> all = List.of(moved, surged, evicted, full, autoscaled, handedBack);
        assertThat(admin.policy()
                        .v1()
                        .podDisruptionBudget()
                        .inNamespace(NS)
                        .withName(Names.roleService("moved", "server"))
                        .get()
                        .getSpec()
                        .getMinAvailable()
                        .getIntVal())
                .as("the budget keeps every Pod")
                .isEqualTo(4);
        assertThat(admin.pods()
                        .inNamespace(NS)
                        .withName(Names.pod("moved", "server", 3, 0))
                        .evict(new EvictionBuilder()
                                .withNewMetadata()
                                .withName(Names.pod("moved", "server", 3, 0))
                                .withNamespace(NS)
                                .endMetadata()
                                .build()))
                .as("an eviction of an engine Pod let through")
                .isFalse();

        List<CompletableFuture<NodeMaintenance.Outcome>> running =
                all.stream().map(NodeMaintenance::startUnderLoad).toList();
        await("a move under way")
                .atMost(Duration.ofSeconds(60))
                .until(() -> world.retirements("moved").stream()
                        .anyMatch(r -> "NodeMaintenance".equals(r.cause()) && "Draining".equals(r.state())));
        world.killOperatorAndStartAnother();
        Map<String, NodeMaintenance.Outcome> outcomes = new TreeMap<>();
        for (int i = 0; i < all.size(); i++) {
            outcomes.put(all.get(i).name(), running.get(i).get(6, TimeUnit.MINUTES));
        }
        outcomes.values().forEach(o -> System.out.println(o.summary()));
        List<Event> events = RecordedEvents.occurrences(admin, NS);

        for (NodeMaintenance protocol : List.of(moved, surged, full, autoscaled)) {
            NodeMaintenance.Outcome outcome = outcomes.get(protocol.name());
            assertThat(outcome.drainOutput()).as(protocol.name()).contains("drained");
            assertThat(outcome.cut()).as(protocol.name() + ": cut generations").isEmpty();
            assertThat(outcome.longStreams())
                    .as(protocol.name())
                    .allSatisfy(r -> assertThat(r.outcome()).as(r.why()).isEqualTo(LoadGenerator.Outcome.COMPLETED));
            assertThat(protocol.podsOnTheNodeThatGoes()).as(protocol.name()).isEmpty();
            assertThat(events)
                    .as(protocol.name())
                    .filteredOn(e -> "NodeMaintenanceMove".equals(e.getReason()))
                    .extracting(Event::getMessage)
                    .anySatisfy(m -> assertThat(m).startsWith(protocol.moveStartedFor(3)));
        }
        assertThat(outcomes.get("moved").leastReady())
                .as("replicas ready at the least, moved one at a time")
                .isGreaterThanOrEqualTo(3);
        assertThat(outcomes.get("surged").leastReady())
                .as("replicas ready at the least, each replacement first")
                .isGreaterThanOrEqualTo(4);
        assertThat(events)
                .filteredOn(e -> "NodeMaintenanceMove".equals(e.getReason()))
                .extracting(Event::getMessage)
                .anySatisfy(m -> assertThat(m)
                        .contains(autoscaled.pair().leaving().name()
                                + " is marked for removal by the cluster autoscaler"));
        assertThat(full.podsWaitingForRoom())
                .as("the replacements no node has room for")
                .hasSize(2);

        NodeMaintenance.Outcome evictions = outcomes.get("evicted");
        assertThat(evictions.drainOutput()).contains("drained");
        assertThat(evictions.longStreams())
                .as("a stream twice the grace, on the first Pod evicted")
                .anySatisfy(r -> assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.CUT));
        assertThat(evictions.leastReady())
                .as("replicas ready at the least, under the budget")
                .isGreaterThanOrEqualTo(3);

        NodeMaintenance.Outcome handed = outcomes.get("handback");
        assertThat(handed.drainOutput()).contains("drained");
        assertThat(events)
                .filteredOn(e -> "HandedBackToDrain".equals(e.getReason()))
                .extracting(Event::getMessage)
                .anySatisfy(m -> assertThat(m)
                        .startsWith(
                                "replica 3 of role server could not be moved off its node through the protocol (not proven"
                                        + " idle within 30 s"));
        // the other replica's turn comes as the budget runs out: it is handed back before its move, or at once after it
        // began with what little was left
        assertThat(events)
                .filteredOn(e -> "HandedBackToDrain".equals(e.getReason()))
                .extracting(Event::getMessage)
                .anySatisfy(m -> assertThat(m).startsWith("replica 2 of role server could not be moved off its node"));
        assertThat(handed.took())
                .as("the drain held no longer than the drain budget, the grace, and the protocol's and kubectl's steps")
                .isLessThan(Duration.ofSeconds(30 + GRACE + 30));
    }
}
