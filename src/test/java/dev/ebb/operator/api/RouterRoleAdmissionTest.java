package dev.ebb.operator.api;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CRD's own admission refuses roles that vLLM's router or SGLang's gateway cannot reach, as the operator's checks
 * do, so that such a resource is refused when it is written rather than accepted and left unrendered; likewise a
 * Prefill/Decode deployment that does not say which role autoscalers drive, or names a role it does not have.
 */
class RouterRoleAdmissionTest {
    private static final String NS = "adm";
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

    static Stream<Arguments> shapes() {
        return Stream.of(
                Arguments.of("vllm-router, roles on two ports",
                        deployment("md", "vLLM").router("vllm-router").role(role("a")).role(role("b").port(9000)), "spec.roles[].port"),
                Arguments.of("sglang-gateway, one role on the default port and one on its own",
                        deployment("md", "SGLang").router("sglang-gateway").role(role("a").port(8000)).role(role("b").port(8001)),
                        "spec.roles[].port"),
                Arguments.of("vllm-router, a Server role beside a split",
                        deployment("md", "vLLM").router("vllm-router").role(role("s")).role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")), "spec.roles[].kind"),
                Arguments.of("sglang-gateway, prefill without decode",
                        deployment("md", "SGLang").router("sglang-gateway").role(role("p").kind("Prefill")), "spec.roles[].kind"),
                Arguments.of("vllm-router, a split on one port", deployment("md", "vLLM").router("vllm-router").scaling("d")
                        .role(role("p").kind("Prefill").port(8100)).role(role("d").kind("Decode").port(8100)), null),
                Arguments.of("sglang-gateway, Server roles on the default port, one of them explicitly",
                        deployment("md", "SGLang").router("sglang-gateway").role(role("a")).role(role("b").port(8000).kind("Server")), null),
                Arguments.of("no router, roles on two ports and a lone prefill role",
                        deployment("md", "vLLM").scaling("b").role(role("p").kind("Prefill")).role(role("b").port(9000)), null),
                Arguments.of("a Prefill/Decode split naming no role to scale",
                        deployment("md", "vLLM").router("llm-d-router").role(role("p").kind("Prefill")).role(role("d").kind("Decode")),
                        "spec.scaling.role: Invalid value: \"object\": " + ModelDeploymentSpec.SCALING_ROLE_REQUIRED),
                Arguments.of("a scaled role that is not one of the roles",
                        deployment("md", "vLLM").scaling("decode").role(role("server")),
                        "spec.scaling.role: Invalid value: \"object\": " + ModelDeploymentSpec.SCALING_ROLE_UNKNOWN),
                Arguments.of("a split naming its decode role, with replicas for the autoscaler",
                        deployment("md", "SGLang").router("sglang-gateway").scaling("d", 2).role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void theCrdAndTheOperatorAgree(String title, Specs.Deployment shape, String refusedField) {
        KubernetesClientException refused = catchThrowableOfType(KubernetesClientException.class,
                () -> client.resource(shape.namespace(NS).build()).create());
        boolean operatorRefuses = Specs.RESOLVER.resolve(shape.build()) instanceof Resolution.Rejected;

        if (refusedField == null) {
            assertThat(refused).isNull();
            assertThat(operatorRefuses).isFalse();
        } else {
            assertThat(refused).as("the API server should refuse it").isNotNull();
            assertThat(refused.getCode()).isEqualTo(422);
            assertThat(refused.getStatus().getMessage()).contains(refusedField);
            assertThat(operatorRefuses).isTrue();
        }
    }
}
