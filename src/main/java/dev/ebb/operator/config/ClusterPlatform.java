package dev.ebb.operator.config;

import dev.ebb.operator.api.Platform;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.VersionInfo;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * What the cluster the operator runs against supports, from the API server's version. Only a version that was read is
 * kept: a failed read is asked again next time, since rendering on a guess would change what Pods render, and so
 * their hash, until the next restart.
 */
@ApplicationScoped
public class ClusterPlatform {
    private static final Logger LOG = Logger.getLogger(ClusterPlatform.class);
    private final KubernetesClient client;
    private volatile Platform platform;

    public ClusterPlatform(KubernetesClient client) {
        this.client = client;
    }

    /** The platform, or empty while the API server's version cannot be read. */
    public Optional<Platform> current() {
        Platform known = platform;
        if (known == null) {
            known = read().orElse(null);
            platform = known;
        }
        return Optional.ofNullable(known);
    }

    private Optional<Platform> read() {
        try {
            VersionInfo version = client.getKubernetesVersion();
            Platform read = Platform.of(version.getMajor(), version.getMinor());
            LOG.infof(
                    "Kubernetes %s.%s: %s sidecars",
                    version.getMajor(), version.getMinor(), read.nativeSidecars() ? "native" : "classic");
            return Optional.of(read);
        } catch (KubernetesClientException | NullPointerException e) {
            LOG.warnf(
                    "the API server's version cannot be read (%s); Pods whose form depends on it wait until it can",
                    e.getMessage());
            return Optional.empty();
        }
    }
}
