package dev.ebb.operator.cluster;

import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimKubelet;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A Node of the real control plane, played on this machine: registered as a kubelet registers itself (Ready, its
 * loopback address, capacity including an accelerator), with the test world's kubelet as its agent, running the Pods
 * the scheduler binds to it.
 */
public final class ClusterNode implements AutoCloseable {
    /** An extended resource as a device plugin advertises one, so Pods that ask for accelerators fit here. */
    public static final String ACCELERATOR = "nvidia.com/gpu";

    private static final String NODE_LEASES = "kube-node-lease";
    /** The kubelet renews its Lease every quarter of its 40 s duration (nodelease.NewController, v1.37.2). */
    static final Duration LEASE_DURATION = Duration.ofSeconds(40);

    private final KubernetesClient client;
    private final String name;
    private final SimKubelet kubelet;
    private final NodeExec exec;
    private final NodeRouters routers;
    private final ScheduledExecutorService heartbeat =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("node-lease"));

    private ClusterNode(KubernetesClient client, String name, SimKubelet kubelet, NodeExec exec) {
        this.client = client;
        this.name = name;
        this.kubelet = kubelet;
        this.exec = exec;
        this.routers = new NodeRouters(client);
        kubelet.runRoutersWith(routers);
    }

    /** Registers the Node and starts its agent and its kubelet endpoint, giving its Pods addresses from {@code addresses}. */
    public static ClusterNode register(
            ControlPlane plane, KubernetesClient client, String name, LoopbackAddresses addresses) throws IOException {
        NodeExec exec = NodeExec.start(client, plane.release(), plane.logs().resolve(name));
        client.resource(new NodeBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withLabels(Map.of(
                                "kubernetes.io/hostname",
                                name,
                                "kubernetes.io/os",
                                "linux",
                                "kubernetes.io/arch",
                                "amd64"))
                        .endMetadata()
                        .build())
                .create();
        // a merge patch of the whole status, without a resourceVersion: node lifecycle writes the new Node too, and an
        // edit read before its write would conflict
        client.nodes()
                .withName(name)
                .subresource("status")
                .patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        new NodeBuilder()
                                .withStatus(status(plane.version(), exec.port()))
                                .build());
        ClusterNode node = new ClusterNode(client, name, SimKubelet.onNode(client, addresses, name), exec);
        node.renewLease();
        long period = LEASE_DURATION.toMillis() / 4;
        node.heartbeat.scheduleAtFixedRate(node::renewLease, period, period, TimeUnit.MILLISECONDS);
        return node;
    }

    /** The Node's Lease in kube-node-lease, which node lifecycle reads as the agent's heartbeat. */
    private void renewLease() {
        try {
            Node owner = client.nodes().withName(name).get();
            client.resource(new LeaseBuilder()
                            .withNewMetadata()
                            .withName(name)
                            .withNamespace(NODE_LEASES)
                            .addNewOwnerReference()
                            .withApiVersion("v1")
                            .withKind("Node")
                            .withName(name)
                            .withUid(owner.getMetadata().getUid())
                            .endOwnerReference()
                            .endMetadata()
                            .withNewSpec()
                            .withHolderIdentity(name)
                            .withLeaseDurationSeconds((int) LEASE_DURATION.toSeconds())
                            .withRenewTime(ZonedDateTime.now(ZoneOffset.UTC))
                            .endSpec()
                            .build())
                    .forceConflicts()
                    .serverSideApply();
        } catch (KubernetesClientException e) {
            // the next beat tries again, as the kubelet's lease controller does
        }
    }

    private static NodeStatus status(String version, int kubeletPort) {
        String now = Instant.now().toString();
        Map<String, Quantity> capacity = Map.of(
                "cpu",
                new Quantity("64"),
                "memory",
                new Quantity("512Gi"),
                "pods",
                new Quantity("110"),
                "ephemeral-storage",
                new Quantity("1Ti"),
                ACCELERATOR,
                new Quantity("8"));
        return new NodeStatusBuilder()
                .withCapacity(capacity)
                .withAllocatable(capacity)
                .addNewCondition()
                .withType("Ready")
                .withStatus("True")
                .withReason("KubeletReady")
                .withMessage("kubelet is posting ready status")
                .withLastHeartbeatTime(now)
                .withLastTransitionTime(now)
                .endCondition()
                .addNewAddress()
                .withType("InternalIP")
                .withAddress("127.0.0.1")
                .endAddress()
                .addNewAddress()
                .withType("Hostname")
                .withAddress("localhost")
                .endAddress()
                .withNewDaemonEndpoints()
                .withNewKubeletEndpoint()
                .withPort(kubeletPort)
                .endKubeletEndpoint()
                .endDaemonEndpoints()
                .withNewNodeInfo()
                .withKubeletVersion("v" + version)
                .withOperatingSystem("linux")
                .withArchitecture("amd64")
                .withContainerRuntimeVersion("sim://1")
                .withKernelVersion("")
                .withOsImage("")
                .withKubeProxyVersion("")
                .withMachineID("")
                .withSystemUUID("")
                .withBootID("")
                .endNodeInfo()
                .build();
    }

    public String name() {
        return name;
    }

    public SimKubelet kubelet() {
        return kubelet;
    }

    /** The routers running in the router Pods bound here. */
    NodeRouters routers() {
        return routers;
    }

    /**
     * The agent stops and the Node leaves the cluster, so that the scheduler of a control plane shared by other tests
     * never binds a Pod to it (a stopped kubelet's Node would stay Ready until node lifecycle's grace ran out).
     */
    @Override
    public void close() {
        heartbeat.shutdownNow();
        routers.close();
        kubelet.close();
        exec.close();
        client.nodes().withName(name).delete();
    }
}
