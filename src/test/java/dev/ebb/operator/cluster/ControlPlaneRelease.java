package dev.ebb.operator.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kubernetes release the cluster tier runs, and where its binaries are. The release has one home: the Go module
 * that builds them ({@code src/test/go/kube/go.mod}); {@code make cluster-binaries} builds them into the directory
 * fabric8's kube-api-test reads.
 */
public record ControlPlaneRelease(String version, Path binaries) {
    /** What the cluster tier runs: the control plane, kubectl, and the node agent's exec endpoint. */
    static final List<String> BINARIES =
            List.of("etcd", "kube-apiserver", "kubectl", "kube-controller-manager", "kube-scheduler", "node-exec");

    static final Path KUBE_MODULE = Path.of("src", "test", "go", "kube", "go.mod");
    private static final Pattern REQUIRED = Pattern.compile("(?m)^\\s*k8s\\.io/kubernetes v(1\\.\\d+\\.\\d+)\\b");

    /** The release {@code go.mod} pins, with its binaries under {@code root/k8s/<version>-linux-amd64}. */
    public static ControlPlaneRelease pinned(Path root) {
        String module;
        try {
            module = Files.readString(KUBE_MODULE);
        } catch (IOException e) {
            throw new UncheckedIOException("the cluster tier reads its Kubernetes release from " + KUBE_MODULE, e);
        }
        return new ControlPlaneRelease(releaseIn(module), root);
    }

    /** The same, from kube-api-test's own directory: $KUBE_API_TEST_DIR, or ~/.kubeapitest. */
    public static ControlPlaneRelease pinned() {
        String dir = System.getenv("KUBE_API_TEST_DIR");
        return pinned(
                dir != null && !dir.isBlank()
                        ? Path.of(dir)
                        : Path.of(System.getProperty("user.home"), ".kubeapitest"));
    }

    static String releaseIn(String goMod) {
        Matcher m = REQUIRED.matcher(goMod);
        if (!m.find()) {
            throw new IllegalStateException(KUBE_MODULE + " requires no k8s.io/kubernetes release");
        }
        return m.group(1);
    }

    public Path directory() {
        return binaries.resolve("k8s").resolve(version + "-linux-amd64");
    }

    /** Whether every binary the cluster tier runs is there ({@code make cluster-binaries} builds them). */
    public boolean built() {
        return BINARIES.stream().allMatch(name -> Files.isExecutable(directory().resolve(name)));
    }

    public Path binary(String name) {
        Path binary = directory().resolve(name);
        if (!Files.isExecutable(binary)) {
            throw new IllegalStateException(
                    binary + " is missing: `make cluster-binaries` builds the control plane of Kubernetes " + version
                            + " (it needs Go)");
        }
        return binary;
    }
}
