package dev.ebb.operator.config;

import dev.ebb.operator.api.Platform;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.VersionInfo;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/** What the cluster the operator runs against supports, read once from the API server's version. */
@ApplicationScoped
public class ClusterPlatform {
    private static final Logger LOG = Logger.getLogger(ClusterPlatform.class);
    private final KubernetesClient client;
    private volatile Platform platform;

    public ClusterPlatform(KubernetesClient client) {
        this.client = client;
    }

    public Platform current() {
        Platform known = platform;
        if (known == null) {
            known = read();
            platform = known;
        }
        return known;
    }

    private Platform read() {
        try {
            VersionInfo version = client.getKubernetesVersion();
            Platform read = Platform.of(version.getMajor(), version.getMinor());
            LOG.infof("Kubernetes %s.%s: %s sidecars", version.getMajor(), version.getMinor(), read.nativeSidecars() ? "native" : "classic");
            return read;
        } catch (KubernetesClientException | NullPointerException e) {
            LOG.warnf("the API server's version cannot be read (%s); sidecars are rendered as plain containers", e.getMessage());
            return Platform.BEFORE_NATIVE_SIDECARS;
        }
    }
}
