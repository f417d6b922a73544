package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.MockWebServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The test world's API server: the fabric8 mock server in CRUD mode with the ModelDeployment CRD's admission in
 * front, started for a Quarkus test so that the operator under test talks to it.
 */
public final class SimApiServer implements QuarkusTestResourceLifecycleManager {
    /** Where the build writes the generated CRD; Quarkus augments the application before test resources start. */
    public static final Path CRD = Path.of("target", "kubernetes", "modeldeployments.serving.ebb.dev-v1.yml");

    private KubernetesMockServer server;

    /** Read once per class loader: the file does not change between two builds. */
    private static volatile CustomResourceDefinition generated;

    /**
     * The generated CRD, read whole. Every Quarkus test writes the file again as it augments the application, and
     * the test JVMs run side by side, so a read may meet the file half written (seen: an empty CRD); it is read again
     * until it parses, for up to 10 s.
     */
    public static CustomResourceDefinition generatedCrd() {
        CustomResourceDefinition crd = generated;
        if (crd == null) {
            try {
                crd = Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(100))
                        .ignoreExceptions()
                        .until(SimApiServer::readCrd, c -> c != null && c.getSpec() != null);
            } catch (ConditionTimeoutException e) {
                throw new IllegalStateException(CRD + " is missing or unreadable; build the project first", e);
            }
            generated = crd;
        }
        return crd;
    }

    private static CustomResourceDefinition readCrd() throws IOException {
        try (InputStream in = Files.newInputStream(CRD)) {
            return Serialization.unmarshal(in, CustomResourceDefinition.class);
        }
    }

    public static KubernetesMockServer startServer() {
        return startServer(List.of());
    }

    /** @param granted the RBAC rules the server's clients hold, as a rules review reports them */
    public static KubernetesMockServer startServer(List<PolicyRule> granted) {
        AdmittingDispatcher dispatcher = dispatcher();
        dispatcher.grant(granted);
        return startServer(dispatcher);
    }

    /** The store and admission of a server, for a test that injects faults into it before starting it. */
    public static AdmittingDispatcher dispatcher() {
        CustomResourceDefinition crd = generatedCrd();
        return new AdmittingDispatcher(
                new CrdAdmission(crd),
                crd.getSpec().getGroup(),
                crd.getSpec().getNames().getPlural(),
                ScaleSubresource.of(crd));
    }

    public static KubernetesMockServer startServer(AdmittingDispatcher dispatcher) {
        KubernetesMockServer server = new KubernetesMockServer(
                new io.fabric8.mockwebserver.Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init();
        return server;
    }

    /**
     * A client that reports a failed answer at once: fabric8 retries 5xx and 429 answers by itself, with a backoff
     * that would let a test's fault outlast it only after tens of seconds.
     */
    public static KubernetesClient clientWithoutRetries(KubernetesMockServer server) {
        return new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(server.createClient().getConfiguration())
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build();
    }

    /** The same, with its own User-Agent, so that the server can treat this caller apart (see {@link UnreliableApi}). */
    public static KubernetesClient clientWithoutRetries(KubernetesMockServer server, String userAgent) {
        return new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(server.createClient().getConfiguration())
                        .withRequestRetryBackoffLimit(0)
                        .withUserAgent(userAgent)
                        .build())
                .build();
    }

    @Override
    public Map<String, String> start() {
        server = startServer();
        return Map.of(
                "quarkus.kubernetes-client.api-server-url",
                        server.createClient().getConfiguration().getMasterUrl(),
                "quarkus.kubernetes-client.trust-certs", "true",
                "quarkus.kubernetes-client.namespace", "test");
    }

    @Override
    public void stop() {
        if (server != null) {
            server.destroy();
        }
    }
}
