package dev.ebb.operator.sim;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterRenderer;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.net.BindException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.jboss.logging.Logger;

/**
 * The kubelet the mock API server lacks. It binds every Pod (a finalizer stands in for the kubelet's hold on a
 * running Pod, so a delete leaves it Terminating), starts an engine for every engine container (a fake one unless
 * told to run another {@link EngineRuntime}), reports the Pod Running, and Ready once the container's readiness probe
 * passes (at once without one), and on deletion plays the real termination sequence: the preStop hook as a real
 * process, SIGTERM, the grace deadline, the kill. Each fake engine behaves as the release its image's tag names, with
 * the shutdown flags its command line gives.
 * The startup probe is not run: it asks what the readiness probe asks at the same period, so a real kubelet holds
 * readiness back by at most one period with it, and it restarts only an engine that never answers within its budget.
 */
public final class SimKubelet implements AutoCloseable {
    public static final String FINALIZER = "sim.ebb.dev/kubelet";
    /** The one node of the test world, which its kubelet binds every Pod to. */
    public static final String SIM_NODE = "sim-node";

    private static final Duration RESTART_PATIENCE = Duration.ofSeconds(5);
    /**
     * The least time the kubelet leaves a container between SIGTERM and the kill, however much of the grace the preStop
     * hook used (kuberuntime's killContainer, minimumGracePeriodInSeconds).
     */
    static final Duration MINIMUM_GRACE = Duration.ofSeconds(2);

    static final Duration DEFAULT_GRACE = Duration.ofSeconds(30);
    /** How long a kubelet-started engine takes to load its model unless a test says otherwise: short, so suites stay fast. */
    public static final Duration DEFAULT_LOAD_DELAY = Duration.ofMillis(100);
    /**
     * How often a failing readiness probe is tried again. The rendered probe asks for every 5 s (periodSeconds); the
     * sim tries far more often so that suites stay fast, which only brings Ready forward within that period.
     */
    static final Duration PROBE_RETRY = Duration.ofMillis(50);

    private static final Logger LOG = Logger.getLogger(SimKubelet.class);
    /** Outside the 127.0.x.y addresses Pods get: nothing ever listens here, so a connection is refused at once. */
    private static final String NOWHERE = "127.255.0.1";

    private final KubernetesClient client;
    private final LoopbackAddresses addresses;
    /** The Node it is the agent of, on a real cluster; empty in the test world, where it binds every Pod itself. */
    private final Optional<String> nodeName;

    private final Map<String, Node> pods = new ConcurrentHashMap<>();
    private final List<Termination> terminations = new CopyOnWriteArrayList<>();
    private final ExecutorService workers = Executors.newCachedThreadPool(DaemonThreads.named("sim-kubelet"));
    private final SharedIndexInformer<Pod> informer;
    private final HttpClient prober = prober();
    private volatile BiConsumer<Pod, EngineBehaviour> shaping = (pod, behaviour) -> {};
    private volatile Duration loadDelay = DEFAULT_LOAD_DELAY;
    private volatile EngineRuntime runtime = this::startFakeEngine;
    /** What runs in a router Pod, where another part of the world plays routers; nothing by default. */
    private volatile EngineRuntime routers = (pod, address) -> Optional.empty();

    private volatile boolean closed;
    private volatile Unplaceable unplaceable;
    /** The uids of the Pods told unschedulable, so that each is told once. */
    private final Set<String> unplaced = ConcurrentHashMap.newKeySet();

    private record Unplaceable(Predicate<Pod> which, String schedulerSays) {}

    /** What the kubelet keeps per Pod: its address, the engine it started, and for a follower its leader's key. */
    private static final class Node {
        final String address;
        final Optional<String> leader;
        volatile EngineContainer engine;
        /** The router a router Pod runs, where a runtime for routers is given. */
        volatile EngineContainer router;
        /** A follower's page of its own schedulers' gauges, where it has one. */
        volatile FollowerPage page;

        volatile FakeRoutingProxy proxy;
        volatile String containerId;
        volatile int restarts;
        volatile boolean terminating;
        /** When it was bound, as the API server's binding writes it on the PodScheduled condition. */
        final String scheduledAt = Instant.now().toString();

        Node(String address, Optional<String> leader) {
            this.address = address;
            this.leader = leader;
        }
    }

    /** The test world's kubelet: it binds every Pod of the mock API server itself and holds each with a finalizer. */
    public SimKubelet(KubernetesClient client, LoopbackAddresses addresses) {
        this(client, addresses, Optional.empty());
    }

    /**
     * The same as the node agent of a real cluster's Node: it runs only the Pods the scheduler bound to that Node, holds
     * nothing with a finalizer, and once a deleted Pod's containers have stopped removes it as the kubelet does, with a
     * zero grace and the Pod's UID as a precondition (status_manager.go, canBeDeleted and the delete in syncPod, at
     * Kubernetes v1.37.2). The Node itself is the caller's to register.
     */
    public static SimKubelet onNode(KubernetesClient client, LoopbackAddresses addresses, String nodeName) {
        return new SimKubelet(client, addresses, Optional.of(nodeName));
    }

    private SimKubelet(KubernetesClient client, LoopbackAddresses addresses, Optional<String> nodeName) {
        this.client = client;
        this.addresses = addresses;
        this.nodeName = nodeName;
        var watched = nodeName.map(node -> client.pods().inAnyNamespace().withField("spec.nodeName", node))
                .orElse(client.pods().inAnyNamespace());
        this.informer = watched.inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                observe(pod);
            }

            @Override
            public void onUpdate(Pod old, Pod pod) {
                observe(pod);
            }

            @Override
            public void onDelete(Pod pod, boolean unknown) {
                Node node = pods.remove(key(pod));
                if (node == null) {
                    return;
                }
                stopAll(node);
                if (!node.terminating) {
                    workers.submit(() -> collectiveLost(node));
                }
            }
        });
    }

    /** Each engine started from now on loads its model this long before it serves. */
    public SimKubelet loadDelay(Duration delay) {
        loadDelay = delay;
        return this;
    }

    /** Lets a test shape each engine started from now on, after the kubelet has read its release from the Pod. */
    public SimKubelet shapeEngines(BiConsumer<Pod, EngineBehaviour> shaper) {
        shaping = shaper;
        return this;
    }

    /** Runs the router of each router Pod started from now on with this runtime; without one, router Pods run nothing. */
    public SimKubelet runRoutersWith(EngineRuntime runtime) {
        routers = runtime;
        return this;
    }

    /** Runs each engine started from now on with this runtime instead of a fake engine. */
    public SimKubelet runEnginesWith(EngineRuntime engines) {
        runtime = engines;
        return this;
    }

    public List<Termination> terminations() {
        return List.copyOf(terminations);
    }

    /** The fake engine a Pod runs; empty when it runs none, or a real engine's process. */
    public Optional<FakeEngine> engine(String namespace, String pod) {
        return Optional.ofNullable(pods.get(namespace + "/" + pod))
                .map(n -> n.engine)
                .flatMap(SimKubelet::fake);
    }

    private static Optional<FakeEngine> fake(EngineContainer container) {
        return container instanceof FakeEngine engine ? Optional.of(engine) : Optional.empty();
    }

    /** The container crashes and comes back: the engine loses what it held, and the container gets a new ID. */
    public void restartContainer(String namespace, String podName) throws IOException {
        Node node = pods.get(namespace + "/" + podName);
        Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
        if (node == null || pod == null) {
            throw new IllegalArgumentException("no running pod " + namespace + "/" + podName);
        }
        if (node.engine != null) {
            node.engine.kill();
        }
        node.restarts++;
        collectiveLost(node);
        node.engine = restartEngine(pod, node.address);
        node.containerId = newContainerId();
        reportRunning(pod, node);
    }

    /**
     * A follower's process ended: the collective its leader's engine runs on spans every member, so the leader's
     * engine fails with it, ending every generation it held, and its container restarts unless the Pod is already
     * leaving. Read in the engines: SGLang's scheduler on rank 0 raises on the next broadcast to the lost rank or hits
     * its 300 s watchdog, then SIGQUITs its parent, which kills the whole process tree (managers/scheduler.py,
     * run_scheduler_process; managers/tokenizer_manager.py, running_phase_sigquit_handler; at v0.5.6). vLLM's leader
     * watches only its local workers, so a lost headless node fails its next step by the 300 s
     * VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS, the engine core dies (EngineDeadError to every request) and the API server
     * exits (v1/executor/multiproc_executor.py, v1/engine/core.py, entrypoints/launcher.py terminate_if_errored, at
     * upstream 2fd893b4c). Here the generations end at once where a real engine may first stall for up to those
     * 300 s: either way they are lost.
     */
    private void collectiveLost(Node follower) {
        Optional<Node> leader = follower.leader.flatMap(key -> Optional.ofNullable(pods.get(key)));
        EngineContainer engine = leader.map(n -> n.engine).orElse(null);
        if (engine == null || engine.exited()) {
            return;
        }
        if (leader.get().terminating) {
            engine.kill();
            return;
        }
        String[] key = follower.leader.get().split("/", 2);
        try {
            restartContainer(key[0], key[1]);
        } catch (IOException | IllegalArgumentException e) {
            LOG.debugf(
                    "the leader %s did not come back after its collective failed: %s",
                    follower.leader.get(), e.getMessage());
        }
    }

    private void observe(Pod pod) {
        String key = key(pod);
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            Node node = pods.get(key);
            if (node != null && !node.terminating) {
                node.terminating = true;
                workers.submit(() -> terminate(pod, node));
            } else if (node == null) {
                release(pod, ProcessContainer.KILLED);
            }
            return;
        }
        if (pods.containsKey(key)) {
            return;
        }
        if (nodeName.isEmpty() && !placeable(pod)) {
            return;
        }
        Node node = new Node(addresses.next(), leaderKey(pod));
        pods.put(key, node);
        workers.submit(() -> bind(pod, node));
    }

    /**
     * Whether the test world's scheduler places the Pod now, as kube-scheduler would: never while it carries a
     * scheduling gate (a lifted gate comes back here as an update), nor while a test keeps it from being placed, in
     * which case it says so on the Pod as kube-scheduler does.
     */
    private boolean placeable(Pod pod) {
        if (pod.getSpec().getSchedulingGates() != null
                && !pod.getSpec().getSchedulingGates().isEmpty()) {
            return false;
        }
        Unplaceable rule = unplaceable;
        if (rule == null || !rule.which().test(pod)) {
            return true;
        }
        if (unplaced.add(pod.getMetadata().getUid())) {
            workers.submit(() -> reportUnschedulable(pod, rule.schedulerSays()));
        }
        return false;
    }

    /** The condition kube-scheduler writes on a Pod it finds no node for (seen on v1.37.2 in the cluster tier). */
    private void reportUnschedulable(Pod pod, String schedulerSays) {
        try {
            client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .editStatus(p -> {
                        p.setStatus(new PodStatusBuilder()
                                .withPhase("Pending")
                                .addNewCondition()
                                .withType("PodScheduled")
                                .withStatus("False")
                                .withReason("Unschedulable")
                                .withMessage(schedulerSays)
                                .withLastTransitionTime(Instant.now().toString())
                                .endCondition()
                                .build());
                        return p;
                    });
        } catch (KubernetesClientException e) {
            LOG.debugf("could not report %s unschedulable: %s", key(pod), e.getMessage());
        }
    }

    /**
     * From now on the test world's scheduler leaves the Pods {@code which} selects unplaced, as kube-scheduler leaves a
     * Pod no node has room for, and says {@code schedulerSays} on them.
     */
    public SimKubelet leaveUnplaced(Predicate<Pod> which, String schedulerSays) {
        unplaceable = new Unplaceable(which, schedulerSays);
        return this;
    }

    /** Room is found again: every Pod left unplaced is placed now, as the scheduler's next try would. */
    public void placeEverything() {
        unplaceable = null;
        unplaced.clear();
        informer.getStore().list().forEach(this::observe);
    }

    private void bind(Pod pod, Node node) {
        try {
            if (nodeName.isEmpty()) {
                client.pods()
                        .inNamespace(pod.getMetadata().getNamespace())
                        .withName(pod.getMetadata().getName())
                        .edit(p -> {
                            if (!p.getMetadata().getFinalizers().contains(FINALIZER)) {
                                p.getMetadata().getFinalizers().add(FINALIZER);
                            }
                            // bound as the binding subresource binds: the node named in the spec
                            p.getSpec().setNodeName(SIM_NODE);
                            return p;
                        });
            }
            // a native sidecar starts before the main containers, a classic one beside them (KEP-753)
            boolean nativeProxy = RoutingProxies.nativeSidecar(pod);
            if (nativeProxy) {
                node.proxy = RoutingProxies.start(pod, node.address).orElse(null);
            }
            if (RouterRenderer.COMPONENT_ROUTER.equals(
                    Optional.ofNullable(pod.getMetadata().getLabels())
                            .orElse(Map.of())
                            .get(RouterRenderer.COMPONENT))) {
                node.router = routers.start(pod, node.address).orElse(null);
            } else {
                node.engine = runtime.start(pod, node.address).orElse(null);
            }
            node.page = startFollowerPage(pod, node);
            if (!nativeProxy) {
                node.proxy = RoutingProxies.start(pod, node.address).orElse(null);
            }
            if (closed) {
                stopAll(node);
                return;
            }
            node.containerId = newContainerId();
            reportRunning(pod, node);
        } catch (KubernetesClientException e) {
            LOG.debugf("could not bind %s: %s", key(pod), e.getMessage());
        } catch (IOException | RuntimeException e) {
            // the Pod then never gets an address, and a test waiting for it only times out: say why where it shows
            LOG.warnf(e, "could not start the engine of %s on %s", key(pod), node.address);
        }
    }

    /** Running at once; Ready when the readiness probe passes, which may take until the model is loaded. */
    private void reportRunning(Pod pod, Node node) {
        Container main = pod.getSpec().getContainers().get(0);
        if (passesReadiness(pod, main, node)) {
            reportStatus(pod, node, true);
            return;
        }
        reportStatus(pod, node, false);
        String containerId = node.containerId;
        workers.submit(() -> {
            while (!closed
                    && !node.terminating
                    && containerId.equals(node.containerId)
                    && probed(node) != null
                    && !probed(node).exited()) {
                if (passesReadiness(pod, main, node)) {
                    reportStatus(pod, node, true);
                    return;
                }
                sleepQuietly(PROBE_RETRY.toMillis());
            }
        });
    }

    /**
     * The container's httpGet readiness probe against its engine, as the kubelet runs it: any status from 200 to 399
     * within the probe's timeout passes, a certificate is not checked. Without a probe a running container is ready,
     * and so is one this kubelet runs nothing probed for (a fake router, a router other parts of the world play, or a
     * follower).
     */
    private boolean passesReadiness(Pod pod, Container main, Node node) {
        HTTPGetAction get = Optional.ofNullable(main.getReadinessProbe())
                .map(Probe::getHttpGet)
                .orElse(null);
        if (get == null || probed(node) == null) {
            return true;
        }
        if (!collectiveWhole(pod)) {
            return false;
        }
        int port = get.getPort().getIntVal() != null
                ? get.getPort().getIntVal()
                : main.getPorts().get(0).getContainerPort();
        String scheme = "HTTPS".equalsIgnoreCase(get.getScheme()) ? "https" : "http";
        int timeout = Optional.ofNullable(main.getReadinessProbe().getTimeoutSeconds())
                .orElse(1);
        try {
            HttpResponse<Void> answer = prober.send(
                    HttpRequest.newBuilder(URI.create(scheme + "://" + node.address + ":" + port + get.getPath()))
                            .timeout(Duration.ofSeconds(timeout))
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
            return answer.statusCode() >= 200 && answer.statusCode() < 400;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The container whose readiness probe is run: the engine, or a router that answers its release's probe. */
    private static EngineContainer probed(Node node) {
        EngineContainer router = node.router;
        return node.engine != null ? node.engine : router != null && router.answersProbes() ? router : null;
    }

    /**
     * Whether every follower of a leader's replica runs. A multi-node engine answers its health endpoint only once every
     * rank has joined its collective: SGLang starts its HTTP server after its schedulers report ready, which they do
     * after torch.distributed's rendezvous of all ranks and the model load (sglang/srt/entrypoints/http_server.py,
     * launch_server, which runs Engine._launch_subprocesses first, at v0.5.15); vLLM's API server is built only once
     * every engine core has come up (vllm/v1/engine/utils.py, wait_for_engine_startup, at 0.32.0), and a core's
     * executor spans every node of the replica.
     */
    private boolean collectiveWhole(Pod pod) {
        Map<String, String> labels =
                Optional.ofNullable(pod.getMetadata().getLabels()).orElse(Map.of());
        Map<String, String> annotations =
                Optional.ofNullable(pod.getMetadata().getAnnotations()).orElse(Map.of());
        int size = Labels.number(annotations.getOrDefault(Annotations.REPLICA_SIZE, "1"))
                .orElse(1);
        if (size <= 1 || !"0".equals(labels.get(Labels.MEMBER_INDEX))) {
            return true;
        }
        int ordinal = Labels.number(labels.getOrDefault(Labels.REPLICA, "")).orElse(-1);
        return IntStream.range(1, size)
                .mapToObj(member -> pod.getMetadata().getNamespace() + "/"
                        + Names.pod(labels.get(Labels.DEPLOYMENT), labels.get(Labels.ROLE), ordinal, member))
                .map(pods::get)
                .allMatch(follower -> follower != null && follower.containerId != null && !follower.terminating);
    }

    private static HttpClient prober() {
        try {
            // the kubelet's probe is a plain HTTP/1.1 GET; the JDK's default would ask to upgrade to h2c, which uvicorn
            // warns about on every probe of a real engine
            return HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .sslContext(SelfSignedTls.trustingClientContext())
                    .connectTimeout(Duration.ofSeconds(1))
                    .build();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private void reportStatus(Pod pod, Node node, boolean ready) {
        String now = Instant.now().toString();
        String readiness = ready ? "True" : "False";
        Container main = pod.getSpec().getContainers().get(0);
        try {
            client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .editStatus(p -> {
                        p.setStatus(new PodStatusBuilder()
                                .withPhase("Running")
                                .withPodIP(node.address)
                                .addNewPodIP(node.address)
                                .withHostIP("127.0.0.1")
                                .addNewHostIP("127.0.0.1")
                                .withStartTime(now)
                                .addNewCondition()
                                .withType("PodScheduled")
                                .withStatus("True")
                                .withLastTransitionTime(node.scheduledAt)
                                .endCondition()
                                .addNewCondition()
                                .withType("Initialized")
                                .withStatus("True")
                                .endCondition()
                                .addNewCondition()
                                .withType("ContainersReady")
                                .withStatus(readiness)
                                .endCondition()
                                .addNewCondition()
                                .withType("Ready")
                                .withStatus(readiness)
                                .withLastTransitionTime(now)
                                .endCondition()
                                .withContainerStatuses(new ContainerStatusBuilder()
                                        .withName(main.getName())
                                        .withImage(main.getImage())
                                        .withContainerID(node.containerId)
                                        .withReady(ready)
                                        .withStarted(true)
                                        .withRestartCount(node.restarts)
                                        .withNewState()
                                        .withNewRunning()
                                        .withStartedAt(now)
                                        .endRunning()
                                        .endState()
                                        .build())
                                .build());
                        return p;
                    });
        } catch (KubernetesClientException e) {
            LOG.debugf("could not report %s: %s", key(pod), e.getMessage());
        }
    }

    private void terminate(Pod pod, Node node) {
        Instant seen = Instant.now();
        long start = System.nanoTime();
        // the deletion's own grace wins over the spec's: kubelet's kuberuntime_container.go, killContainer, reads
        // DeletionGracePeriodSeconds first
        Duration grace = Optional.ofNullable(pod.getMetadata().getDeletionGracePeriodSeconds())
                .or(() -> Optional.ofNullable(pod.getSpec().getTerminationGracePeriodSeconds()))
                .map(Duration::ofSeconds)
                .orElse(DEFAULT_GRACE);
        // the container this kubelet plays: the one with the hook (a router Pod's Envoy), else the first
        Container main = pod.getSpec().getContainers().stream()
                .filter(c -> preStopOf(c).isPresent())
                .findFirst()
                .orElse(pod.getSpec().getContainers().get(0));
        Optional<List<String>> hook = preStopOf(main);
        Optional<Duration> hookTook = Optional.empty();
        String hookOutput = "";
        String terminationMessage = null;
        FakeRoutingProxy proxy = node.proxy;
        boolean nativeProxy = RoutingProxies.nativeSidecar(pod);
        if (proxy != null && !nativeProxy) {
            // a regular container without a hook of its own: kuberuntime_container.go, killContainersWithSyncResult,
            // stops every regular container at once, each right after its own preStop hook (kubernetes/kubernetes,
            // KEP-753 text)
            proxy.sigterm();
        }
        if (hook.isPresent()) {
            HookRun run =
                    runHook(hook.get(), ProcessContainer.literalEnvironment(main), node.address, pod, main, grace);
            hookTook = Optional.of(run.took);
            hookOutput = run.stderr;
            terminationMessage = run.terminationMessage;
        }
        Duration sigterm = since(start);
        // the container gets what is left of the grace after the hook, and never less than the minimum
        Duration left = grace.minus(sigterm);
        Duration deadline = sigterm.plus(left.compareTo(MINIMUM_GRACE) < 0 ? MINIMUM_GRACE : left);
        EngineContainer engine = node.engine != null ? node.engine : node.router;
        boolean killed = false;
        if (engine != null) {
            engine.sigterm();
            while (!engine.exited() && since(start).compareTo(deadline) < 0) {
                sleepQuietly(20);
            }
            if (!engine.exited()) {
                engine.kill();
                killed = true;
            }
        }
        if (proxy != null && nativeProxy) {
            // a native sidecar gets SIGTERM only once every regular container has exited:
            // kuberuntime_termination_order.go, newTerminationOrdering ("sidecars need to wait for all main containers
            // to exit"), Kubernetes 1.29 and later
            proxy.sigterm();
        }
        Optional.ofNullable(node.page).ifPresent(FollowerPage::close);
        collectiveLost(node);
        terminations.add(new Termination(
                pod.getMetadata().getNamespace(),
                pod.getMetadata().getName(),
                seen,
                hookTook,
                hookOutput,
                sigterm,
                since(start),
                killed));
        release(pod, killed ? ProcessContainer.KILLED : 0, terminationMessage);
    }

    /** @param terminationMessage what the container's termination message file held afterwards, null when nothing */
    private record HookRun(Duration took, String stderr, String terminationMessage) {}

    private static Optional<List<String>> preStopOf(Container container) {
        return Optional.ofNullable(container.getLifecycle())
                .map(l -> l.getPreStop())
                .map(h -> h.getExec())
                .map(e -> e.getCommand());
    }

    /**
     * Runs the hook's argv as given, except the loopback host the operator renders, which becomes this Pod's, and a
     * peer's name (a follower's leader), which becomes that Pod's address while it runs.
     */
    private HookRun runHook(
            List<String> argv,
            Map<String, String> env,
            String podAddress,
            Pod pod,
            Container container,
            Duration grace) {
        long start = System.nanoTime();
        String namespace = pod.getMetadata().getNamespace();
        try (ConfigMapMounts mounts = ConfigMapMounts.of(client, pod, container);
                ContainerFiles files = ContainerFiles.create()) {
            List<String> command = files.onHost(
                    mounts.onHost(PodAddressing.onPodAddress(argv, podAddress, name -> peerAddress(namespace, name))));
            ProcessBuilder builder = LocalProcesses.builder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
            builder.environment().putAll(env);
            Process process = builder.start();
            StringBuilder stderr = new StringBuilder();
            Thread drain = new Thread(() -> {
                try {
                    stderr.append(new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
                } catch (IOException ignored) {
                    // the process was killed
                }
            });
            drain.start();
            boolean done = process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
            if (!done) {
                process.destroyForcibly();
            }
            drain.join(1000);
            return new HookRun(since(start), stderr.toString(), files.terminationMessage());
        } catch (IOException e) {
            return new HookRun(since(start), "hook failed to start: " + e.getMessage(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new HookRun(since(start), "interrupted", null);
        }
    }

    /**
     * The address a member's stable name (hostname.subdomain) resolves to while its Pod is here. Once the Pod is gone
     * its name resolves nowhere, which ends a hook as a refused connection does; an address where nothing listens
     * stands in for that, so that this machine's resolver plays no part.
     */
    private Optional<String> peerAddress(String namespace, String name) {
        int dot = name.indexOf('.');
        return dot <= 0
                ? Optional.empty()
                : Optional.of(Optional.ofNullable(pods.get(namespace + "/" + name.substring(0, dot)))
                        .map(n -> n.address)
                        .orElse(NOWHERE));
    }

    /** A follower's leader, as the Pod's own labels place it: the member 0 of its replica. */
    private static Optional<String> leaderKey(Pod pod) {
        return MemberSlot.leaderOf(
                        Optional.ofNullable(pod.getMetadata().getLabels()).orElse(Map.of()))
                .map(leader -> pod.getMetadata().getNamespace() + "/" + leader.pod());
    }

    /**
     * Lets the API server remove a Pod whose containers have stopped: the finalizer here; on a Node, as the kubelet's
     * status manager does (pkg/kubelet/status/status_manager.go, Kubernetes v1.37.2), the terminal phase written first
     * (canBeDeleted waits for it), then a delete with a grace of 0 and the Pod's UID as its precondition (syncPod).
     */
    private void release(Pod pod, int exitCode) {
        release(pod, exitCode, null);
    }

    private void release(Pod pod, int exitCode, String terminationMessage) {
        if (nodeName.isEmpty()) {
            if (terminationMessage != null) {
                // what a kubelet reports before the Pod goes, so that a watcher sees how the container ended
                reportTerminated(pod, exitCode, terminationMessage);
            }
            releaseFinalizer(pod);
            return;
        }
        reportTerminated(pod, exitCode, terminationMessage);
        String url = client.getConfiguration().getMasterUrl().replaceAll("/$", "") + "/api/v1/namespaces/"
                + pod.getMetadata().getNamespace() + "/pods/"
                + pod.getMetadata().getName();
        try {
            client.raw(
                    url,
                    "DELETE",
                    new DeleteOptionsBuilder()
                            .withGracePeriodSeconds(0L)
                            .withNewPreconditions()
                            .withUid(pod.getMetadata().getUid())
                            .endPreconditions()
                            .build());
        } catch (KubernetesClientException e) {
            LOG.debugf("pod %s already gone: %s", key(pod), e.getMessage());
        }
    }

    /** Succeeded when the container exited with 0, else Failed (getPhase in pkg/kubelet/kubelet_pods.go), its state terminated. */
    private void reportTerminated(Pod pod, int exitCode, String terminationMessage) {
        String now = Instant.now().toString();
        try {
            client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .editStatus(p -> {
                        PodStatus status = Optional.ofNullable(p.getStatus()).orElseGet(PodStatus::new);
                        status.setPhase(exitCode == 0 ? "Succeeded" : "Failed");
                        Optional.ofNullable(status.getConditions()).orElse(List.of()).stream()
                                .filter(c -> c.getType().equals("Ready")
                                        || c.getType().equals("ContainersReady"))
                                .forEach(c -> c.setStatus("False"));
                        Optional.ofNullable(status.getContainerStatuses())
                                .orElse(List.of())
                                .forEach(c -> {
                                    c.setReady(false);
                                    c.setState(new ContainerStateBuilder()
                                            .withNewTerminated()
                                            .withExitCode(exitCode)
                                            .withReason(exitCode == 0 ? "Completed" : "Error")
                                            .withMessage(terminationMessage)
                                            .withFinishedAt(now)
                                            .endTerminated()
                                            .build());
                                });
                        p.setStatus(status);
                        return p;
                    });
        } catch (KubernetesClientException e) {
            LOG.debugf("could not report %s terminated: %s", key(pod), e.getMessage());
        }
    }

    private void releaseFinalizer(Pod pod) {
        try {
            client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .edit(p -> {
                        p.getMetadata().getFinalizers().remove(FINALIZER);
                        return p;
                    });
        } catch (KubernetesClientException e) {
            LOG.debugf("pod %s already gone: %s", key(pod), e.getMessage());
        }
    }

    /**
     * The new container binds the address the old one just released; the operating system may hold it a moment
     * longer, so it tries again for a while, as a kubelet's restart back-off would give it time to.
     */
    private EngineContainer restartEngine(Pod pod, String address) throws IOException {
        long giveUp = System.nanoTime() + RESTART_PATIENCE.toNanos();
        while (true) {
            try {
                return runtime.start(pod, address).orElse(null);
            } catch (BindException e) {
                if (System.nanoTime() > giveUp) {
                    throw e;
                }
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            }
        }
    }

    private Optional<EngineContainer> startFakeEngine(Pod pod, String address) throws IOException {
        Container main = pod.getSpec().getContainers().get(0);
        Optional<Engine> engine = CommandedEngine.engineOf(main.getCommand());
        if (engine.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(CommandedEngine.start(
                engine.get(),
                main.getImage(),
                main.getCommand(),
                main.getPorts().get(0).getContainerPort(),
                address,
                behaviour -> shaping.accept(pod, behaviour.loadDelay(loadDelay))));
    }

    /** A follower whose SGLang schedulers count requests of their own serves them on a page of its own. */
    private FollowerPage startFollowerPage(Pod pod, Node node) throws IOException {
        Container main = pod.getSpec().getContainers().get(0);
        List<String> command = Optional.ofNullable(main.getCommand()).orElse(List.of());
        Optional<Integer> port = CommandedEngine.argAfter(command, "--port")
                .filter(p -> p.matches("\\d{1,5}"))
                .map(Integer::parseInt);
        if (port.isEmpty()) {
            // not an operator-rendered engine (a plain container of the cluster tier, say): nothing of SGLang's runs
            return null;
        }
        return FollowerPage.start(
                        main.getImage(),
                        command,
                        node.address,
                        port.get(),
                        CommandedEngine.argAfter(command, "--served-model-name").orElse("model"),
                        () -> node.leader
                                .flatMap(key -> Optional.ofNullable(pods.get(key)))
                                .map(leader -> leader.engine)
                                .flatMap(SimKubelet::fake))
                .orElse(null);
    }

    private static String newContainerId() {
        return "sim://" + UUID.randomUUID();
    }

    private static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    private static Duration since(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void stopAll(Node node) {
        if (node.engine != null) {
            node.engine.kill();
        }
        if (node.router != null) {
            node.router.kill();
        }
        if (node.page != null) {
            node.page.close();
        }
        if (node.proxy != null) {
            node.proxy.kill();
        }
    }

    @Override
    public void close() {
        closed = true;
        informer.close();
        workers.shutdownNow();
        pods.values().forEach(SimKubelet::stopAll);
    }
}
