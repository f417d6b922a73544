package dev.ebb.operator.cluster;

import static org.awaitility.Awaitility.await;

import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.sim.LoopbackAddresses;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;

/**
 * One test class's world on the shared control plane: a namespace of its own, the CRD, a Node of its own with its
 * agent, and the packaged operator as deployed, Ready. Closing it stops the operator, takes the Node away and deletes
 * the namespace.
 */
final class ClusterWorld implements AutoCloseable {
    final ControlPlane plane;
    final KubernetesClient admin;
    final String namespace;
    final ClusterNode node;
    final PackagedOperator operator;

    private ClusterWorld(ControlPlane plane, KubernetesClient admin, String namespace, ClusterNode node, PackagedOperator operator) {
        this.plane = plane;
        this.admin = admin;
        this.namespace = namespace;
        this.node = node;
        this.operator = operator;
    }

    /** @param watched what the operator's Deployment would give it as EBB_WATCH_NAMESPACES ("" for every namespace) */
    static ClusterWorld start(String namespace, String watched) throws IOException {
        ControlPlane plane = ControlPlane.shared();
        KubernetesClient admin = plane.adminClient();
        ClusterCrd.install(admin);
        admin.resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        ClusterNode node = ClusterNode.register(plane, admin, "node-" + namespace, LoopbackAddresses.podNetwork());
        PackagedOperator operator = DeployedOperator.start(plane, "ebb-operator-" + namespace, plane.logs().resolve(namespace + "-operator.log"),
                Map.of("EBB_WATCH_NAMESPACES", watched));
        ClusterWorld world = new ClusterWorld(plane, admin, namespace, node, operator);
        await("the operator ready").atMost(Duration.ofSeconds(90)).until(() -> operator.status("/q/health/ready") == 200);
        return world;
    }

    @Override
    public void close() {
        operator.close();
        node.close();
        admin.namespaces().withName(namespace).delete();
        admin.close();
    }
}
