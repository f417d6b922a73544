package dev.ebb.operator.sim;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A fresh simulated kubelet for each test, on the mock API server fabric8's extension gives the test class. Its engines
 * serve at once: the hand-made Pods of these tests carry no readiness probe, so they are Ready as soon as they run, as
 * Kubernetes has it, and an engine still loading its model would refuse the streams the tests start then.
 */
public final class KubeletPerTest implements BeforeEachCallback, AfterEachCallback {
    private final Supplier<KubernetesClient> client;
    private SimKubelet kubelet;

    /** @param client the test's client, read once the mock server's extension has set it */
    public KubeletPerTest(Supplier<KubernetesClient> client) {
        this.client = client;
    }

    public SimKubelet get() {
        return kubelet;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        kubelet = new SimKubelet(client.get(), new LoopbackAddresses()).loadDelay(Duration.ZERO);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        kubelet.close();
    }
}
