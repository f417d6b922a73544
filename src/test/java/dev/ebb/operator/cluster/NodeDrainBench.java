package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The node drain benchmark on the real control plane: {@code kubectl drain} of a Node holding two of four replicas,
 * under four streaming clients of 4 s generations and one stream of twice the grace on each replica of that Node, for
 * Ebb with {@code nodeMaintenance: Protocol}, Ebb with {@code Evict}, and a Deployment as the engines' guides write one
 * (no hook, the default 30 s grace, a budget of one unavailable). All three at once, each on a pair of Nodes of its own.
 */
public final class NodeDrainBench {
    private static final String NS = "drain-bench";
    /** The grace of Ebb's two arms; the Deployment keeps Kubernetes' default, 30 s. */
    private static final int GRACE = 30;

    private static final int LONG_STREAM_SECONDS = 2 * GRACE;

    private NodeDrainBench() {}

    public static void run() throws Exception {
        System.out.printf(
                Locale.ROOT,
                "Node drain of 2 of 4 replicas under 4 streaming clients (4 s generations) and a %d s stream on each%n",
                LONG_STREAM_SECONDS);
        System.out.println(
                "replica of the drained node; real kube-apiserver, controller-manager and scheduler; the three arms at once");
        if (!ControlPlaneRelease.pinned().built()) {
            System.out.println("  skipped: the control plane's binaries are not built (make cluster-binaries)");
            System.out.println();
            return;
        }
        List<Arm> arms = List.of(
                new Arm(
                        "Ebb, Protocol",
                        "protocol",
                        NodeMaintenance.modelDeployment(
                                Specs.role("server").grace(GRACE).drainSeconds(240))),
                new Arm(
                        "Ebb, Evict",
                        "evict",
                        NodeMaintenance.modelDeployment(
                                Specs.role("server").grace(GRACE).disruption(1, "Evict"))),
                new Arm("plain Deployment", "plain", new PlainDeployment()));
        List<NodeMaintenance.Outcome> outcomes = new ArrayList<>();
        try (ClusterWorld world = ClusterWorld.start(NS, NS)) {
            List<NodeMaintenance> placed = new ArrayList<>();
            for (Arm arm : arms) {
                placed.add(NodeMaintenance.placed(
                        world, arm.name(), arm.workload(), NodeMaintenance.Action.DRAIN, LONG_STREAM_SECONDS));
            }
            List<CompletableFuture<NodeMaintenance.Outcome>> running =
                    placed.stream().map(NodeMaintenance::startUnderLoad).toList();
            for (CompletableFuture<NodeMaintenance.Outcome> each : running) {
                outcomes.add(each.get(10, TimeUnit.MINUTES));
            }
        }
        System.out.printf(
                Locale.ROOT,
                "  %-17s %10s %5s %15s %16s%n",
                "arm",
                "completed",
                "cut",
                "least ready",
                "drain took (s)");
        for (int i = 0; i < arms.size(); i++) {
            NodeMaintenance.Outcome o = outcomes.get(i);
            System.out.printf(
                    Locale.ROOT,
                    "  %-17s %10d %5d %15d %16.1f%n",
                    arms.get(i).label(),
                    o.completed(),
                    o.cutCount(),
                    o.leastReady(),
                    o.took().toMillis() / 1000.0);
        }
        System.out.println(
                "  least ready: the fewest replicas ready and taking new requests while the drain ran; drain took: from kubectl drain");
        System.out.println("  to the node drained; cut: generations that started and ended early");
        System.out.println();
    }

    private record Arm(String label, String name, NodeMaintenance.Workload workload) {}

    /**
     * The engine container Ebb renders, without the operator's drain hook, in a Deployment with the default grace and a
     * budget of one unavailable Pod: what a guide for running vLLM on Kubernetes has.
     */
    private static final class PlainDeployment implements NodeMaintenance.Workload {
        private static final String APP = "test.ebb.dev/plain";

        @Override
        public void create(ClusterWorld world, String name, int replicas) {
            DesiredDeployment desired = deployment(name, "vLLM")
                    .namespace(world.namespace)
                    .role(Specs.role("server"))
                    .desired();
            Pod rendered = new PodRenderer()
                    .render(new MemberSlot(desired, desired.roles().get(0), 0, 0), "plain");
            Container engine = new ContainerBuilder(
                            rendered.getSpec().getContainers().get(0))
                    .withLifecycle(null)
                    .withVolumeMounts(List.of())
                    .build();
            Map<String, String> labels = Map.of(APP, name);
            world.admin
                    .resource(new DeploymentBuilder()
                            .withNewMetadata()
                            .withName(name)
                            .withNamespace(world.namespace)
                            .endMetadata()
                            .withNewSpec()
                            .withReplicas(replicas)
                            .withNewSelector()
                            .withMatchLabels(labels)
                            .endSelector()
                            .withNewTemplate()
                            .withNewMetadata()
                            .withLabels(labels)
                            .endMetadata()
                            .withNewSpec()
                            .withContainers(engine)
                            .withNodeSelector(NodeMaintenance.pairSelector(name))
                            .endSpec()
                            .endTemplate()
                            .endSpec()
                            .build())
                    .create();
            world.admin
                    .resource(new ServiceBuilder()
                            .withNewMetadata()
                            .withName(name)
                            .withNamespace(world.namespace)
                            .endMetadata()
                            .withNewSpec()
                            .withSelector(labels)
                            .addNewPort()
                            .withName("http")
                            .withPort(engine.getPorts().get(0).getContainerPort())
                            .withTargetPort(
                                    new IntOrString(engine.getPorts().get(0).getContainerPort()))
                            .endPort()
                            .endSpec()
                            .build())
                    .create();
            world.admin
                    .resource(new PodDisruptionBudgetBuilder()
                            .withNewMetadata()
                            .withName(name)
                            .withNamespace(world.namespace)
                            .endMetadata()
                            .withNewSpec()
                            .withMaxUnavailable(new IntOrString(1))
                            .withNewSelector()
                            .withMatchLabels(labels)
                            .endSelector()
                            .endSpec()
                            .build())
                    .create();
        }

        @Override
        public void scale(ClusterWorld world, String name, int replicas) {
            world.admin
                    .apps()
                    .deployments()
                    .inNamespace(world.namespace)
                    .withName(name)
                    .scale(replicas);
        }

        @Override
        public String service(String name) {
            return name;
        }

        @Override
        public List<Pod> pods(ClusterWorld world, String name) {
            return world.admin
                    .pods()
                    .inNamespace(world.namespace)
                    .withLabel(APP, name)
                    .list()
                    .getItems();
        }
    }

    public static void main(String[] args) throws Exception {
        run();
        System.exit(0);
    }
}
