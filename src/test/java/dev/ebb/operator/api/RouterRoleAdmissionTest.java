package dev.ebb.operator.api;

import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CRD's own admission refuses roles that vLLM's router or SGLang's gateway cannot reach, as the operator's checks
 * do, so that such a resource is refused when it is written rather than accepted and left unrendered; likewise a
 * Prefill/Decode deployment that does not say which role autoscalers drive, or names a role it does not have.
 */
class RouterRoleAdmissionTest {
    private KubernetesMockServer server;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        server = SimApiServer.startServer();
        client = server.createClient();
    }

    @AfterEach
    void stop() {
        client.close();
        server.destroy();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.ebb.operator.api.AdmissionCases#routerShapes")
    void theCrdAndTheOperatorAgree(AdmissionCases.RouterShape shape) {
        shape.checkAgainst(client);
    }
}
