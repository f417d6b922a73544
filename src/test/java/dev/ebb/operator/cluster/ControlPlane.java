package dev.ebb.operator.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.jboss.logging.Logger;

/**
 * A real Kubernetes control plane on this machine: etcd and kube-apiserver started by fabric8's kube-api-test (RBAC
 * authorization, a client certificate in system:masters for the harness), and kube-controller-manager and
 * kube-scheduler beside them, each a process of its own whose output goes to {@code target/cluster/<name>/}.
 * Closing it, or the JVM ending, stops all of them.
 */
public final class ControlPlane implements AutoCloseable {
    /**
     * The controllers the operator's world depends on, named as kube-controller-manager v1.37 spells them
     * (cmd/kube-controller-manager/names): EndpointSlices for Services, garbage collection of owned objects, the
     * router's Deployment, namespace deletion, PodDisruptionBudgets, the default ServiceAccount, and node lifecycle,
     * which lifts the not-ready taint a new Node is admitted with once its agent renews its Lease, and taints and
     * evicts as a cluster does when the agent stops. The controllers that need keys or clouds this harness does not
     * have are left out.
     */
    static final List<String> CONTROLLERS = List.of(
            "endpointslice-controller",
            "endpointslice-mirroring-controller",
            "endpoints-controller",
            "garbage-collector-controller",
            "deployment-controller",
            "replicaset-controller",
            "namespace-controller",
            "disruption-controller",
            "serviceaccount-controller",
            "pod-garbage-collector-controller",
            "resourcequota-controller",
            "clusterrole-aggregation-controller",
            "node-lifecycle-controller",
            "taint-eviction-controller");

    private static final Logger LOG = Logger.getLogger(ControlPlane.class);

    private final String name;
    private final ControlPlaneRelease release;
    private final KubeAPIServer apiServer;
    private final AtomicBoolean replacingApiServer;
    private final Path kubeconfig;
    private final Path logs;
    private final List<Process> processes = new ArrayList<>();
    private final Thread stopAtExit = new Thread(this::stopProcesses, "control-plane-stop");
    private volatile boolean closed;

    private ControlPlane(
            String name,
            ControlPlaneRelease release,
            KubeAPIServer apiServer,
            AtomicBoolean replacingApiServer,
            Path kubeconfig,
            Path logs) {
        this.name = name;
        this.release = release;
        this.apiServer = apiServer;
        this.replacingApiServer = replacingApiServer;
        this.kubeconfig = kubeconfig;
        this.logs = logs;
    }

    private static ControlPlane shared;

    /**
     * The control plane the cluster tier's classes share in one JVM, each in namespaces of its own; started by the
     * first that asks, stopped when the JVM ends. A class that stops or breaks its control plane starts its own.
     */
    public static synchronized ControlPlane shared() {
        if (shared == null || shared.closed) {
            shared = start("shared");
        }
        return shared;
    }

    /** Whether a control plane is the one the tier's classes share, which stays up until the JVM ends. */
    static synchronized boolean isShared(ControlPlane plane) {
        return plane == shared;
    }

    /** Starts the pinned release's control plane, named for its logs. */
    public static ControlPlane start(String name) {
        ControlPlaneRelease release = ControlPlaneRelease.pinned();
        // Fail here, naming what builds them, before kube-api-test tries to download what it cannot.
        ControlPlaneRelease.BINARIES.forEach(release::binary);
        AtomicBoolean replacingApiServer = new AtomicBoolean();
        KubeAPIServer apiServer =
                new KubeAPIServer(KubeAPIServerConfigBuilder.anAPIServerConfig()
                        .withTestDir(release.binaries().toString())
                        .withApiServerVersion(release.version())
                        // Every boolean and integer option is set here: kube-api-test 7.5.2 casts its environment
                        // variables to Boolean and Integer, which throws for any value they have.
                        .withOfflineMode(true)
                        .withWaitForEtcdHealthCheckOnStartup(true)
                        .withStartupTimeout((int) Duration.ofMinutes(2).toMillis())
                        // The harness hands out its own kubeconfig; ~/.kube/config would turn `make run` into dev mode.
                        .withUpdateKubeConfig(false)
                        // Nodes of the test world are reached on their loopback InternalIP, at the port each registers.
                        .withApiServerFlag("--kubelet-preferred-address-types", "InternalIP")
                        .build()) {
                    /** kube-api-test stops etcd too when its kube-apiserver exits, unless this harness is the one replacing it. */
                    @Override
                    public void processStopped(Process process) {
                        if (!replacingApiServer.get()) {
                            super.processStopped(process);
                        }
                    }
                };
        Path logs = Path.of("target", "cluster", name).toAbsolutePath();
        try {
            Files.createDirectories(logs);
            apiServer.start();
            Path kubeconfig = Files.writeString(logs.resolve("admin.kubeconfig"), apiServer.getKubeConfigYaml());
            ControlPlane plane = new ControlPlane(name, release, apiServer, replacingApiServer, kubeconfig, logs);
            Runtime.getRuntime().addShutdownHook(plane.stopAtExit);
            plane.startControllers();
            return plane;
        } catch (IOException e) {
            apiServer.stop();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            apiServer.stop();
            throw e;
        }
    }

    private void startControllers() throws IOException {
        spawn(
                "kube-controller-manager",
                List.of(
                        "--kubeconfig=" + kubeconfig,
                        "--leader-elect=false",
                        "--secure-port=0",
                        "--controllers=" + String.join(",", CONTROLLERS),
                        // controllers act on their own informers: a short resync is not needed, a short GC discovery is
                        "--concurrent-gc-syncs=5"));
        spawn("kube-scheduler", List.of("--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0"));
        try (KubernetesClient admin = adminClient()) {
            // The serviceaccount controller writes the default namespace's ServiceAccount once it runs.
            Awaitility.await("kube-controller-manager running")
                    .atMost(Duration.ofMinutes(1))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> admin.serviceAccounts()
                                    .inNamespace("default")
                                    .withName("default")
                                    .get()
                            != null);
        }
    }

    private void spawn(String binary, List<String> flags) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(release.binary(binary).toString());
        command.addAll(flags);
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(logs.resolve(binary + ".log").toFile())
                .start();
        synchronized (processes) {
            processes.add(process);
        }
        process.onExit().thenRun(() -> {
            if (!closed) {
                LOG.errorf(
                        "%s of control plane %s exited with %d; its log: %s",
                        binary, name, process.exitValue(), logs.resolve(binary + ".log"));
            }
        });
    }

    public String version() {
        return release.version();
    }

    public ControlPlaneRelease release() {
        return release;
    }

    /** The harness's kubeconfig: a client certificate in system:masters, so RBAC never stops it. */
    public Path adminKubeconfig() {
        return kubeconfig;
    }

    public KubernetesClient adminClient() {
        return new KubernetesClientBuilder().withConfig(adminConfig()).build();
    }

    public Config adminConfig() {
        return Config.fromKubeconfig(apiServer.getKubeConfigYaml());
    }

    public Path logs() {
        return logs;
    }

    /**
     * Kills kube-apiserver as a crash or the loss of its machine ends it (its own graceful shutdown, on SIGTERM, took
     * 40 s and more here with watches open), keeps it down for {@code down}, and starts it again with the same command
     * line against the same etcd; returns once it is ready. Its new watch cache starts at etcd's current revision.
     */
    public void restartApiServer(Duration down) throws IOException, InterruptedException {
        ProcessHandle running = childRunning("kube-apiserver");
        List<String> command = new ArrayList<>();
        command.add(running.info().command().orElseThrow());
        command.addAll(List.of(running.info().arguments().orElseThrow()));
        replacingApiServer.set(true);
        running.destroyForcibly();
        // polled: kube-api-test's own Process reaps the exit, which onExit() of another handle to it may never see
        Awaitility.await("kube-apiserver exited")
                .atMost(Duration.ofMinutes(1))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> !running.isAlive());
        Thread.sleep(down.toMillis());
        Process restarted = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        logs.resolve("kube-apiserver-restarted.log").toFile()))
                .start();
        synchronized (processes) {
            processes.add(restarted);
        }
        try (KubernetesClient admin = adminClient()) {
            Awaitility.await("kube-apiserver ready again")
                    .atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(() -> "ok".equals(admin.raw(admin.getConfiguration().getMasterUrl() + "readyz")));
        }
    }

    /**
     * Compacts etcd's history up to its current revision, as kube-apiserver's own compaction does every five minutes
     * (--etcd-compaction-interval), through etcd's JSON gateway; returns that revision. A watch or list from an older
     * resourceVersion then meets 410 Gone wherever the API server's cache does not hold it.
     */
    public long compactEtcd() throws IOException, InterruptedException {
        ProcessHandle etcd = childRunning("etcd");
        List<String> arguments = List.of(etcd.info().arguments().orElseThrow());
        String endpoint =
                arguments.get(arguments.indexOf("--listen-client-urls") + 1).replace("0.0.0.0", "127.0.0.1");
        HttpClient http = HttpClient.newHttpClient();
        JsonNode range = etcdCall(http, endpoint + "/v3/kv/range", "{\"key\":\"Lw==\"}");
        long revision = range.path("header").path("revision").asLong();
        etcdCall(http, endpoint + "/v3/kv/compaction", "{\"revision\":\"" + revision + "\",\"physical\":true}");
        return revision;
    }

    private static JsonNode etcdCall(HttpClient http, String url, String body)
            throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException("etcd " + url + " answered " + answer.statusCode() + ": " + answer.body());
        }
        return new ObjectMapper().readTree(answer.body());
    }

    /** The one process of this control plane running {@code binary}, started by kube-api-test or by this class. */
    private ProcessHandle childRunning(String binary) {
        Path path = release.binary(binary).toAbsolutePath();
        List<ProcessHandle> found = ProcessHandle.current()
                .descendants()
                .filter(p -> p.info()
                        .command()
                        .map(c -> Path.of(c).toAbsolutePath().equals(path))
                        .orElse(false))
                .toList();
        if (found.size() != 1) {
            throw new IllegalStateException(
                    found.size() + " processes run " + path + "; a control plane of its own is needed to stop one");
        }
        return found.get(0);
    }

    private void stopProcesses() {
        closed = true;
        List<Process> running;
        synchronized (processes) {
            running = List.copyOf(processes);
        }
        for (Process process : running) {
            process.destroy();
        }
        for (Process process : running) {
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        apiServer.stop();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        stopProcesses();
        try {
            Runtime.getRuntime().removeShutdownHook(stopAtExit);
        } catch (IllegalStateException exiting) {
            // the JVM is already running its shutdown hooks, this one among them
        }
    }
}
