package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.EndpointSlices;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.RouteTarget;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One test class's world on the shared control plane: a namespace of its own, the CRD, a Node of its own with its
 * agent, and the packaged operator as deployed, Ready. Closing it stops the operator, takes the Node away and deletes
 * the namespace.
 */
final class ClusterWorld implements AutoCloseable {
    /** The kubelet's first back-off before it restarts an exited container (backOffPeriod in pkg/kubelet/kubelet.go, v1.37.2,
     * with the alpha ReduceDefaultCrashLoopBackOffDecay gate off, as it is by default). */
    static final Duration RESTART_BACKOFF = Duration.ofSeconds(10);

    final ControlPlane plane;
    final KubernetesClient admin;
    final String namespace;
    /** The test world's node agent; null on a world whose node is a real kubelet's. */
    final ClusterNode node;

    private final Runnable stopNode;
    private final Map<String, String> operatorEnvironment;
    private final AtomicInteger generation = new AtomicInteger();
    private final ScheduledExecutorService restarts =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("operator-restart"));
    private final List<ClusterNode> extraNodes = new ArrayList<>();
    private volatile PackagedOperator operator;
    private volatile boolean closing;

    private ClusterWorld(
            ControlPlane plane,
            KubernetesClient admin,
            String namespace,
            ClusterNode node,
            Runnable stopNode,
            Map<String, String> operatorEnvironment) {
        this.plane = plane;
        this.admin = admin;
        this.namespace = namespace;
        this.node = node;
        this.stopNode = stopNode;
        this.operatorEnvironment = operatorEnvironment;
    }

    /** @param watched what the operator's Deployment would give it as EBB_WATCH_NAMESPACES ("" for every namespace) */
    static ClusterWorld start(String namespace, String watched) throws IOException {
        ControlPlane plane = ControlPlane.shared();
        KubernetesClient admin = prepared(plane, namespace);
        ClusterNode node = ClusterNode.register(plane, admin, "node-" + namespace, LoopbackAddresses.podNetwork());
        ClusterWorld world =
                new ClusterWorld(plane, admin, namespace, node, node::close, Map.of("EBB_WATCH_NAMESPACES", watched));
        world.startOperator();
        return world;
    }

    /**
     * A world whose one node is a real kubelet with containerd and kube-proxy, on a control plane of its own; the
     * operator watches the world's namespace and renders the images the node holds.
     */
    static ClusterWorld onRealNode(String namespace) throws IOException, InterruptedException {
        ControlPlane plane = ControlPlane.start(namespace);
        KubernetesClient admin = prepared(plane, namespace);
        RealNode node;
        try {
            node = RealNode.start(plane, admin);
        } catch (IOException | RuntimeException | InterruptedException e) {
            plane.close();
            throw e;
        }
        Map<String, String> environment = new HashMap<>(RealNode.OPERATOR_IMAGES);
        environment.put("EBB_WATCH_NAMESPACES", namespace);
        ClusterWorld world = new ClusterWorld(plane, admin, namespace, null, node::close, environment);
        world.startOperator();
        return world;
    }

    private static KubernetesClient prepared(ControlPlane plane, String namespace) {
        KubernetesClient admin = plane.adminClient();
        ClusterCrd.install(admin);
        admin.resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(namespace)
                        .endMetadata()
                        .build())
                .create();
        return admin;
    }

    /**
     * Starts the next operator and waits until it is ready. An operator that exits by itself (it halts when it loses
     * its Lease) is started again after the kubelet's back-off, as its container's restartPolicy Always has it.
     */
    private synchronized PackagedOperator startOperator() throws IOException {
        String identity = "ebb-operator-" + namespace + "-" + generation.incrementAndGet();
        PackagedOperator started =
                DeployedOperator.start(plane, identity, plane.logs().resolve(identity + ".log"), operatorEnvironment);
        operator = started;
        started.process().onExit().thenRun(() -> {
            if (!closing && operator == started) {
                restarts.schedule(this::restartQuietly, RESTART_BACKOFF.toMillis(), TimeUnit.MILLISECONDS);
            }
        });
        await("the operator ready")
                .atMost(Duration.ofSeconds(90))
                .until(() -> started.status("/q/health/ready") == 200);
        return started;
    }

    private void restartQuietly() {
        try {
            if (!closing) {
                startOperator();
            }
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("the operator of " + namespace + " could not be started again", e);
        }
    }

    /** Another Node of this world, with its own agent, taken away when the world closes. */
    synchronized ClusterNode addNode(String name) throws IOException {
        ClusterNode added = ClusterNode.register(plane, admin, name, LoopbackAddresses.podNetwork());
        extraNodes.add(added);
        return added;
    }

    PackagedOperator operator() {
        return operator;
    }

    /**
     * The operator's process killed as a node failure or an OOM kill ends it, with no orderly exit and its Lease still
     * held, and another one started in its place at once, as its Deployment would on another node.
     */
    PackagedOperator killOperatorAndStartAnother() throws IOException {
        PackagedOperator killed = operator;
        synchronized (this) {
            operator = null;
            killed.process().destroyForcibly();
        }
        return startOperator();
    }

    /** The Pods of one ModelDeployment in this world's namespace, its router's included. */
    List<Pod> podsOf(String deployment) {
        return admin.pods()
                .inNamespace(namespace)
                .withLabel(Labels.DEPLOYMENT, deployment)
                .list()
                .getItems();
    }

    /** The retirements a ModelDeployment's status records; none when it has no status or is gone. */
    List<RetirementStatus> retirements(String deployment) {
        ModelDeployment md = admin.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .withName(deployment)
                .get();
        return md == null || md.getStatus() == null || md.getStatus().retirements() == null
                ? List.of()
                : md.getStatus().retirements();
    }

    /** A client of one Pod's engine alone, at the Pod's address and its container's port, as a peer in the cluster reaches it. */
    static LoadGenerator.Target straightTo(Pod pod) {
        URI engine = URI.create("http://" + pod.getStatus().getPodIP() + ":"
                + pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort());
        return () -> Optional.of(new RouteTarget(pod.getMetadata().getName(), engine));
    }

    /** A client that authenticates as the operator's ServiceAccount, so the real authorizer grants it what the packaged RBAC grants. */
    KubernetesClient operatorClient() {
        return new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(Config.empty())
                        .withMasterUrl(admin.getConfiguration().getMasterUrl())
                        .withCaCertFile(admin.getConfiguration().getCaCertFile())
                        .withOauthToken(DeployedOperator.token(admin))
                        .build())
                .build();
    }

    /** Runs the release's kubectl as the cluster's admin, and returns what it printed; it must succeed. */
    String kubectl(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                plane.release().binary("kubectl").toString(),
                "--kubeconfig",
                plane.adminKubeconfig().toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor())
                .as("kubectl %s: %s", String.join(" ", args), out)
                .isZero();
        return out;
    }

    /** The Service's EndpointSlices as the real EndpointSlice controller last wrote them, which clients of it follow. */
    EndpointSlices endpointSlices() {
        return (ns, service) -> admin.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(ns)
                .withLabel("kubernetes.io/service-name", service)
                .list()
                .getItems();
    }

    @Override
    public void close() {
        closing = true;
        restarts.shutdownNow();
        Optional.ofNullable(operator).ifPresent(PackagedOperator::close);
        stopNode.run();
        extraNodes.forEach(ClusterNode::close);
        admin.namespaces().withName(namespace).delete();
        admin.close();
        if (!ControlPlane.isShared(plane)) {
            plane.close();
        }
    }
}
