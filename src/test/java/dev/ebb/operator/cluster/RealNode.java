package dev.ebb.operator.cluster;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * A real node under the control plane, on this machine: containerd with runc and the CNI bridge, the release's kubelet
 * and its kube-proxy in iptables mode. Its Pods run in containers of their own, with their own network namespace on a
 * bridge, so the drain hook, the member reads and the engine see what they would see in a cluster. The engine images
 * are made here, with no registry: a Debian root filesystem with python3 and a Java runtime, and the test world's fake
 * engine as a program ({@code dev.ebb.operator.sim.EngineProgram}) in place of {@code vllm} and SGLang's module,
 * imported under the names the operator renders.
 *
 * <p>Needs root and what {@code make node-env} builds. Closing it removes every Pod sandbox it started, its iptables
 * rules, its bridge and its state.
 */
final class RealNode implements AutoCloseable {
    static final String NAME = "real-node";
    static final String POD_SUBNET = "10.88.0.0/16";
    static final String BRIDGE = "ebb0";
    /** The images the operator is told to render (EBB_IMAGES_*): released tags, so that each fake behaves as its release. */
    static final String VLLM_IMAGE = "vllm/vllm-openai:v0.33.0";

    static final String SGLANG_IMAGE = "lmsysorg/sglang:v0.5.23";
    static final Map<String, String> OPERATOR_IMAGES =
            Map.of("EBB_IMAGES_VLLM", VLLM_IMAGE, "EBB_IMAGES_SGLANG", SGLANG_IMAGE);
    private static final Path BUILD = Path.of("src", "test", "node", "build.sh");
    private static final Path ARCHIVE = Path.of("src", "test", "node", "docker-archive.py");
    private static final Path IMAGE_FILES = Path.of("src", "test", "node", "image");
    private static final String PAUSE_IMAGE = "ebb-node/pause:";
    private static final int KUBELET_PORT = 10250;
    private static final Pattern WORD = Pattern.compile("\"([^\"]*)\"|(\\S+)");
    private static final Logger LOG = Logger.getLogger(RealNode.class);

    private final Path runtime;
    private final Path dir;
    private final Path socket;
    private final ControlPlane plane;
    private final List<Process> processes = Collections.synchronizedList(new ArrayList<>());
    private final String address;

    private RealNode(Path runtime, Path dir, ControlPlane plane, String address) {
        this.runtime = runtime;
        this.dir = dir;
        this.socket = dir.resolve("containerd").resolve("containerd.sock");
        this.plane = plane;
        this.address = address;
    }

    /** Starts containerd, imports the images, starts the kubelet and kube-proxy, and waits for the Node to be Ready. */
    static RealNode start(ControlPlane plane, KubernetesClient admin) throws IOException, InterruptedException {
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new IllegalStateException(
                    "a real node's kubelet and containerd run as root; run `make test-node` as root");
        }
        Path runtime = Path.of(run(List.of("bash", BUILD.toString()), Duration.ofMinutes(1))
                .strip()
                .lines()
                .reduce((a, b) -> b)
                .orElseThrow());
        Path dir = plane.logs().resolve("node");
        Files.createDirectories(dir.resolve("logs"));
        RealNode node = new RealNode(runtime, dir, plane, hostAddress());
        try {
            node.startContainerd();
            node.importImages();
            node.startKubelet();
            node.startKubeProxy();
            await("the real node Ready").atMost(Duration.ofMinutes(2)).until(() -> node.ready(admin));
            return node;
        } catch (IOException | RuntimeException | InterruptedException e) {
            node.close();
            throw e;
        }
    }

    String name() {
        return NAME;
    }

    Path logs() {
        return dir.resolve("logs");
    }

    private boolean ready(KubernetesClient admin) {
        Node node = admin.nodes().withName(NAME).get();
        return node != null
                && node.getStatus() != null
                && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream()
                        .anyMatch(c ->
                                c.getType().equals("Ready") && c.getStatus().equals("True"));
    }

    private void startContainerd() throws IOException {
        Path state = dir.resolve("containerd");
        Files.createDirectories(dir.resolve("cni"));
        Files.writeString(dir.resolve("cni").resolve("10-ebb.conflist"), """
                {"cniVersion": "1.0.0", "name": "ebb",
                 "plugins": [
                  {"type": "bridge", "bridge": "%s", "isGateway": true, "ipMasq": true, "hairpinMode": true,
                   "ipam": {"type": "host-local", "ranges": [[{"subnet": "%s"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "%s"}},
                  {"type": "portmap", "capabilities": {"portMappings": true}}]}
                """.formatted(
                        BRIDGE, POD_SUBNET, dir.resolve("cni-ipam")));
        // restrict_oom_score_adj: this machine's root lacks CAP_SYS_RESOURCE, so runc may not lower a container's
        // OOM score below containerd's own ("failed to update /proc/self/oom_score_adj: Permission denied" without it)
        Files.writeString(dir.resolve("containerd.toml"), """
                version = 3
                root = "%1$s/root"
                state = "%1$s/state"
                [grpc]
                  address = "%2$s"
                [plugins.'io.containerd.cri.v1.images']
                  snapshotter = "overlayfs"
                  [plugins.'io.containerd.cri.v1.images'.pinned_images]
                    sandbox = "%3$s"
                [plugins.'io.containerd.cri.v1.runtime']
                  restrict_oom_score_adj = true
                  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
                    runtime_type = "io.containerd.runc.v2"
                    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
                      BinaryName = "%4$s"
                      SystemdCgroup = false
                  [plugins.'io.containerd.cri.v1.runtime'.cni]
                    bin_dirs = ["%5$s"]
                    conf_dir = "%6$s"
                """.formatted(
                        state,
                        socket,
                        pauseImage(),
                        runtime.resolve("bin").resolve("runc"),
                        runtime.resolve("bin"),
                        dir.resolve("cni")));
        spawn(
                "containerd",
                List.of(
                        runtime.resolve("bin").resolve("containerd").toString(),
                        "--config",
                        dir.resolve("containerd.toml").toString()));
        await("containerd serving").atMost(Duration.ofSeconds(30)).until(() -> Files.exists(socket));
    }

    private String pauseImage() {
        return PAUSE_IMAGE + plane.version();
    }

    /** The pause image and one engine image per name the operator renders, each a layer of the root filesystem and one of the program. */
    private void importImages() throws IOException, InterruptedException {
        Path images = dir.resolve("images");
        Path pause = images.resolve("pause");
        Files.createDirectories(pause);
        Files.copy(runtime.resolve("pause"), pause.resolve("pause"), StandardCopyOption.REPLACE_EXISTING);
        importArchive(List.of("--tag", pauseImage(), "--entrypoint", "[\"/pause\"]", pause.toString()));

        Path program = images.resolve("program");
        FileTrees.copy(IMAGE_FILES, program);
        FileTrees.copy(Path.of("target", "classes"), program.resolve("opt/ebb/classes"));
        FileTrees.copy(Path.of("target", "test-classes"), program.resolve("opt/ebb/test-classes"));
        for (String image : List.of(VLLM_IMAGE, SGLANG_IMAGE)) {
            importArchive(List.of(
                    "--tag",
                    image,
                    "--env",
                    "ENGINE_IMAGE=" + image,
                    runtime.resolve("rootfs").toString(),
                    program.toString()));
        }
    }

    private void importArchive(List<String> arguments) throws IOException, InterruptedException {
        Path archive = dir.resolve("images").resolve("image.tar");
        List<String> build = new ArrayList<>(List.of("python3", ARCHIVE.toString(), archive.toString()));
        build.addAll(arguments);
        run(build, Duration.ofMinutes(2));
        run(
                List.of(
                        runtime.resolve("bin").resolve("ctr").toString(),
                        "--address",
                        socket.toString(),
                        "--namespace",
                        "k8s.io",
                        "images",
                        "import",
                        archive.toString()),
                Duration.ofMinutes(2));
        Files.delete(archive);
    }

    private void startKubelet() throws IOException {
        Path config = dir.resolve("kubelet.yaml");
        // failCgroupV1: this machine mounts cgroup v1, which the kubelet refuses from 1.35 unless told otherwise.
        // The API server reaches the kubelet without a client certificate (kube-api-test gives it none), so the
        // kubelet lets anonymous requests through, as a test node may.
        Files.writeString(config, """
                apiVersion: kubelet.config.k8s.io/v1beta1
                kind: KubeletConfiguration
                failCgroupV1: false
                cgroupDriver: cgroupfs
                containerRuntimeEndpoint: unix://%s
                authentication:
                  anonymous: {enabled: true}
                  webhook: {enabled: false}
                authorization: {mode: AlwaysAllow}
                failSwapOn: false
                address: %s
                port: %d
                readOnlyPort: 0
                healthzPort: 0
                resolvConf: /etc/resolv.conf
                evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%%", "imagefs.available": "1%%"}
                imageGCHighThresholdPercent: 100
                imageGCLowThresholdPercent: 99
                """.formatted(socket, address, KUBELET_PORT));
        spawn(
                "kubelet",
                List.of(
                        plane.release().binary("kubelet").toString(),
                        "--config",
                        config.toString(),
                        "--kubeconfig",
                        plane.adminKubeconfig().toString(),
                        "--root-dir",
                        dir.resolve("kubelet").toString(),
                        "--cert-dir",
                        dir.resolve("kubelet-pki").toString(),
                        "--hostname-override",
                        NAME,
                        "--node-ip",
                        address));
    }

    private void startKubeProxy() throws IOException {
        Path config = dir.resolve("kube-proxy.yaml");
        // conntrack's limits are the host's to set; this kube-proxy leaves them as they are
        Files.writeString(config, """
                apiVersion: kubeproxy.config.k8s.io/v1alpha1
                kind: KubeProxyConfiguration
                mode: iptables
                clientConnection: {kubeconfig: %s}
                hostnameOverride: %s
                clusterCIDR: %s
                nodePortAddresses: [primary]
                conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
                metricsBindAddress: 127.0.0.1:10249
                healthzBindAddress: 127.0.0.1:10256
                """.formatted(plane.adminKubeconfig(), NAME, POD_SUBNET));
        spawn("kube-proxy", List.of(plane.release().binary("kube-proxy").toString(), "--config", config.toString()));
    }

    private void spawn(String name, List<String> command) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(logs().resolve(name + ".log").toFile());
        // containerd finds its shim and runc's CNI plugins on its PATH
        builder.environment()
                .put(
                        "PATH",
                        runtime.resolve("bin") + ":" + builder.environment().getOrDefault("PATH", "/usr/bin:/bin"));
        processes.add(builder.start());
    }

    /** Runs a command to its end and returns its output; it must succeed. */
    private static String run(List<String> command, Duration limit) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not end within " + limit);
        }
        if (process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + process.exitValue() + ": " + out);
        }
        return out;
    }

    /** The address the kubelet registers and listens on: this machine's first IPv4 address outside the loopback. */
    private static String hostAddress() throws SocketException {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (nic.isUp() && !nic.isLoopback() && !nic.getName().equals(BRIDGE)) {
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    if (a instanceof Inet4Address) {
                        return a.getHostAddress();
                    }
                }
            }
        }
        throw new IllegalStateException("this machine has no IPv4 address outside the loopback for a node to register");
    }

    /**
     * Removes every Pod sandbox (their containers with them, and their network through CNI), then stops kube-proxy
     * and takes its rules away, stops the kubelet and containerd with the shims it started, and removes the bridge,
     * every mount left under the node's directory and the directory's state.
     */
    @Override
    public void close() {
        quietly(List.of(
                runtime.resolve("bin").resolve("crictl").toString(),
                "--runtime-endpoint",
                "unix://" + socket,
                "rmp",
                "--all",
                "--force"));
        List<Process> started = new ArrayList<>(processes);
        Collections.reverse(started);
        for (Process process : started) {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ProcessHandle.allProcesses()
                .filter(p -> p.info()
                        .commandLine()
                        .map(c -> c.contains(socket.toString()))
                        .orElse(false))
                .forEach(ProcessHandle::destroyForcibly);
        quietly(List.of(plane.release().binary("kube-proxy").toString(), "--cleanup"));
        removeKubeletChains();
        quietly(List.of("ip", "link", "delete", BRIDGE));
        unmountUnder(dir);
        try {
            FileTrees.delete(dir.resolve("containerd"));
            FileTrees.delete(dir.resolve("kubelet"));
        } catch (IOException e) {
            LOG.warnf("the real node's state under %s was not all removed: %s", dir, e.getMessage());
        }
    }

    private static void quietly(List<String> command) {
        try {
            run(command, Duration.ofSeconds(60));
        } catch (IOException e) {
            LOG.warnf("%s: %s", command.get(0), e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The iptables chains the kubelet makes (KUBE-FIREWALL, KUBE-KUBELET-CANARY and the like), which kube-proxy's
     * cleanup leaves, with the rules of the built-in chains that jump to them. This machine is a node of no other
     * cluster, so every KUBE- chain left is this node's.
     */
    private static void removeKubeletChains() {
        for (String table : List.of("filter", "nat", "mangle")) {
            List<String[]> rules;
            try {
                rules = run(List.of("iptables", "-t", table, "-S"), Duration.ofSeconds(30))
                        .lines()
                        .map(RealNode::words)
                        .toList();
            } catch (IOException e) {
                LOG.warnf("iptables -t %s -S: %s", table, e.getMessage());
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            for (String[] rule : rules) {
                boolean jumpToKube = rule.length > 2
                        && rule[0].equals("-A")
                        && !rule[1].startsWith("KUBE-")
                        && rule[rule.length - 1].startsWith("KUBE-")
                        && rule[rule.length - 2].equals("-j");
                if (jumpToKube) {
                    List<String> delete = new ArrayList<>(List.of("iptables", "-t", table, "-D"));
                    delete.addAll(List.of(rule).subList(1, rule.length));
                    quietly(delete);
                }
            }
            List<String> chains = rules.stream()
                    .filter(r -> r.length == 2 && r[0].equals("-N") && r[1].startsWith("KUBE-"))
                    .map(r -> r[1])
                    .toList();
            chains.forEach(chain -> quietly(List.of("iptables", "-t", table, "-F", chain)));
            chains.forEach(chain -> quietly(List.of("iptables", "-t", table, "-X", chain)));
        }
    }

    /** A line of {@code iptables -S} as its words, a quoted comment one word. */
    static String[] words(String line) {
        return WORD.matcher(line)
                .results()
                .map(m -> m.group(1) != null ? m.group(1) : m.group(2))
                .toArray(String[]::new);
    }

    /** The mounts under a directory, deepest first, unmounted lazily: overlay snapshots, shared memory, netns files. */
    private static void unmountUnder(Path dir) {
        List<String> mounts;
        try {
            mounts = Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                    .map(line -> line.split(" ")[4])
                    .filter(point -> point.startsWith(dir.toString()))
                    .sorted(Comparator.reverseOrder())
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        mounts.forEach(point -> quietly(List.of("umount", "-l", point)));
    }
}
