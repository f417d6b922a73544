package dev.ebb.operator.api;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import dev.ebb.operator.api.v1alpha1.EngineSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.common.WithTestResource;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reads the CRD the build generated (Quarkus writes it while augmenting the application, before these tests run),
 * checks that every admission rule of the API is in it, and that the test world's API server enforces them.
 */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class GeneratedCrdIT {
    @Inject
    KubernetesClient client;

    private CustomResourceDefinition crd;
    private CustomResourceDefinitionVersion version;
    private JSONSchemaProps spec;
    private JSONSchemaProps role;

    @BeforeEach
    void load() {
        crd = SimApiServer.generatedCrd();
        version = crd.getSpec().getVersions().get(0);
        spec = version.getSchema().getOpenAPIV3Schema().getProperties().get("spec");
        role = spec.getProperties().get("roles").getItems().getSchema();
    }

    @Test
    void namesScopeAndSubresources() {
        assertThat(crd.getSpec().getGroup()).isEqualTo("serving.ebb.dev");
        assertThat(crd.getSpec().getScope()).isEqualTo("Namespaced");
        assertThat(crd.getSpec().getNames().getKind()).isEqualTo("ModelDeployment");
        assertThat(crd.getSpec().getNames().getPlural()).isEqualTo("modeldeployments");
        assertThat(crd.getSpec().getNames().getShortNames()).containsExactly("md");
        assertThat(crd.getSpec().getNames().getCategories()).containsExactly("ebb");
        assertThat(version.getName()).isEqualTo("v1alpha1");
        assertThat(version.getSubresources().getStatus()).isNotNull();
    }

    @Test
    void scaleSubresourceDrivesTheScaledRolesPlainReplicasPath() {
        var scale = version.getSubresources().getScale();

        assertThat(scale.getSpecReplicasPath()).isEqualTo(".spec.scaling.replicas");
        assertThat(scale.getStatusReplicasPath()).isEqualTo(".status.scaling.replicas");
        assertThat(scale.getLabelSelectorPath()).isEqualTo(".status.scaling.selector");
        JSONSchemaProps replicas = spec.getProperties().get("scaling").getProperties().get("replicas");
        assertBounds(replicas, 0, 1024);
    }

    @Test
    void aSplitMustNameTheRoleToScaleAndTheNameMustBeARole() {
        assertThat(refusal(deployment("s1", "vLLM").namespace("adm").role(role("p").kind("Prefill")).role(role("d").kind("Decode")).build()))
                .endsWith("spec.scaling.role: Invalid value: \"object\": " + ModelDeploymentSpec.SCALING_ROLE_REQUIRED);
        assertThat(refusal(deployment("s2", "vLLM").namespace("adm").scaling("decode").role(role("s")).build()))
                .endsWith("spec.scaling.role: Invalid value: \"object\": " + ModelDeploymentSpec.SCALING_ROLE_UNKNOWN);
        client.resource(deployment("s3", "vLLM").namespace("adm").scaling("d", 3).role(role("p").kind("Prefill")).role(role("d").kind("Decode"))
                .build()).create();
    }

    @Test
    void printerColumns() {
        assertThat(version.getAdditionalPrinterColumns())
                .extracting(c -> c.getName() + "=" + c.getJsonPath())
                .containsExactlyInAnyOrder(
                        "Engine=.spec.engine.name",
                        "Roles=.status.rolesSummary",
                        "Phase=.status.phase",
                        "Retirement=.status.retirementsSummary",
                        "Age=.metadata.creationTimestamp");
    }

    @Test
    void requiredFields() {
        assertThat(spec.getRequired()).containsExactlyInAnyOrder("model", "engine", "roles");
        assertThat(spec.getProperties().get("model").getRequired()).containsExactly("name");
        assertThat(spec.getProperties().get("engine").getRequired()).containsExactly("name");
        assertThat(role.getRequired()).containsExactly("name");
    }

    @Test
    void enumsForEngineRouterAndRoleKind() {
        assertThat(enumOf(spec.getProperties().get("engine").getProperties().get("name"))).containsExactlyInAnyOrder("vLLM", "SGLang");
        assertThat(enumOf(spec.getProperties().get("router").getProperties().get("name")))
                .containsExactlyInAnyOrder("llm-d-router", "vllm-router", "sglang-gateway");
        assertThat(enumOf(role.getProperties().get("kind"))).containsExactlyInAnyOrder("Server", "Prefill", "Decode");
    }

    @Test
    void numericBounds() {
        assertBounds(role.getProperties().get("terminationGracePeriodSeconds"), 15, 3600);
        assertBounds(role.getProperties().get("size"), 1, 64);
        assertBounds(role.getProperties().get("retirement").getProperties().get("drainSeconds"), 30, 86400);
        assertBounds(role.getProperties().get("rollout").getProperties().get("maxSurge"), 0, 1);
        assertBounds(role.getProperties().get("replicas"), 0, 1024);
        assertBounds(role.getProperties().get("port"), 1, 65535);
        assertThat(spec.getProperties().get("roles").getMinItems()).isEqualTo(1L);
        assertThat(spec.getProperties().get("roles").getMaxItems()).isEqualTo(10L);
    }

    @Test
    void roleNameIsABoundedDnsLabel() {
        JSONSchemaProps name = role.getProperties().get("name");
        assertThat(name.getPattern()).isEqualTo("^[a-z]([-a-z0-9]*[a-z0-9])?$");
        assertThat(name.getMaxLength()).isEqualTo(20L);
        assertThat(rule(role.getXKubernetesValidations(), "-r[0-9]+$").getMessage()).contains("spec.roles[].name");
    }

    @Test
    void engineIsImmutable() {
        ValidationRule immutable = rule(spec.getProperties().get("engine").getXKubernetesValidations(), "oldSelf");
        assertThat(immutable.getRule()).isEqualTo("self.name == oldSelf.name");
        assertThat(immutable.getMessage()).startsWith("spec.engine.name is immutable");
    }

    @Test
    void routerMustFitTheEngine() {
        ValidationRule fit = rule(spec.getXKubernetesValidations(), "vllm-router");
        assertThat(fit.getRule()).contains("self.router.name == 'vllm-router' && self.engine.name == 'vLLM'")
                .contains("self.router.name == 'sglang-gateway' && self.engine.name == 'SGLang'")
                .contains("!has(self.router)");
        assertThat(fit.getMessage()).startsWith("spec.router.name");
        assertThat(fit.getFieldPath()).isEqualTo(".router.name");
    }

    @Test
    void roleNamesAreUnique() {
        ValidationRule unique = rule(spec.getXKubernetesValidations(), "exists_one");
        assertThat(unique.getMessage()).isEqualTo("spec.roles[].name must be unique");
    }

    @Test
    void podNamesFitADnsLabel() {
        ValidationRule length = rule(version.getSchema().getOpenAPIV3Schema().getXKubernetesValidations(), "size(self.metadata.name)");
        assertThat(length.getRule()).contains("<= 52");
        assertThat(length.getMessage()).contains("metadata.name and spec.roles[].name");
    }

    @Test
    void takeOverRoleTakesNoExtraArgs() {
        ValidationRule exclusive = rule(role.getXKubernetesValidations(), "self.extraArgs");
        assertThat(exclusive.getFieldPath()).isEqualTo(".extraArgs");
        assertThat(refusal(deployment("x", "vLLM").namespace("adm").role(role("s").command("/bin/engine").extraArgs(List.of("--x"))).build()))
                .endsWith("spec.roles[0].extraArgs: Invalid value: \"object\": " + RoleSpec.EXTRA_ARGS_WITH_COMMAND);
        client.resource(deployment("y", "vLLM").namespace("adm").role(role("s").command("/bin/engine")).build()).create();
    }

    private static List<String> enumOf(JSONSchemaProps props) {
        return props.getEnum().stream().map(n -> n.asText()).toList();
    }

    private static void assertBounds(JSONSchemaProps props, double min, double max) {
        assertThat(props.getMinimum()).isEqualTo(min);
        assertThat(props.getMaximum()).isEqualTo(max);
    }

    private static ValidationRule rule(List<ValidationRule> rules, String fragment) {
        assertThat(rules).as("x-kubernetes-validations").isNotNull();
        return rules.stream().filter(r -> r.getRule().contains(fragment)).findFirst()
                .orElseThrow(() -> new AssertionError("no rule containing " + fragment + " in " + rules));
    }

    private String refusal(ModelDeployment md) {
        Throwable thrown = catchThrowable(() -> client.resource(md).create());
        assertThat(thrown).as("the API server should refuse it").isInstanceOf(KubernetesClientException.class);
        assertThat(((KubernetesClientException) thrown).getCode()).isEqualTo(422);
        return ((KubernetesClientException) thrown).getStatus().getMessage();
    }

    @Test
    void admissionRefusesBadResourcesWithTheCrdsOwnMessages() {
        assertThat(refusal(deployment("a", "TGI").namespace("adm").role(role("s")).build()))
                .isEqualTo("ModelDeployment.serving.ebb.dev \"a\" is invalid: spec.engine.name: Unsupported value: \"TGI\": "
                        + "supported values: \"SGLang\", \"vLLM\"");
        assertThat(refusal(deployment("b", "vLLM").namespace("adm").role(role("s").size(0)).build()))
                .endsWith("spec.roles[0].size: Invalid value: 0: spec.roles[0].size in body should be greater than or equal to 1");
        assertThat(refusal(deployment("c", "vLLM").namespace("adm").role(role("s").grace(3601)).build()))
                .endsWith("spec.roles[0].terminationGracePeriodSeconds in body should be less than or equal to 3600");
        assertThat(refusal(deployment("c3", "vLLM").namespace("adm").role(role("s").extraArgs("--port=9000")).build()))
                .contains("spec.roles[0].extraArgs: Invalid value: \"object\": " + RoleSpec.PORT_IN_EXTRA_ARGS);
        assertThat(refusal(deployment("c4", "vLLM").namespace("adm").role(role("s").extraArgs("--host", "10.0.0.7")).build()))
                .contains(RoleSpec.HOST_IN_EXTRA_ARGS);
        assertThat(refusal(deployment("c5", "SGLang").namespace("adm").role(role("s").size(2).port(5000)).build()))
                .contains("rendezvous port on the leader");
        assertThat(refusal(deployment("c7", "vLLM").namespace("adm").role(role("s").extraArgs("--uds", "/tmp/vllm.sock")).build()))
                .contains(RoleSpec.UDS_IN_EXTRA_ARGS);
        assertThat(refusal(deployment("c8", "vLLM").router("llm-d-router").scaling("p").namespace("adm")
                .role(role("p").kind("Prefill")).role(role("d").kind("Decode").port(8200)).build()))
                .contains(ModelDeploymentSpec.PORT_OF_THE_PROXIED_ENGINE);
        assertThat(refusal(deployment("c2", "vLLM").namespace("adm").role(role("s").drainSeconds(10)).build()))
                .endsWith("spec.roles[0].retirement.drainSeconds in body should be greater than or equal to 30");
        assertThat(refusal(deployment("d", "SGLang").router("vllm-router").namespace("adm").role(role("s")).build()))
                .endsWith("spec.router.name: Invalid value: \"object\": spec.router.name does not fit spec.engine.name: "
                        + "vllm-router serves only vLLM, sglang-gateway only SGLang, llm-d-router either");
        assertThat(refusal(deployment("e", "vLLM").namespace("adm").role(role("s")).role(role("s")).build()))
                .endsWith("spec.roles: Invalid value: \"object\": spec.roles[].name must be unique");
        assertThat(refusal(deployment("f", "vLLM").namespace("adm").role(role("server-r1")).build()))
                .contains("spec.roles[0].name: Invalid value: \"object\": spec.roles[].name must not end in -r<digits>");
        assertThat(refusal(deployment("i", "vLLM").namespace("adm").role(role("router")).build()))
                .contains("spec.roles[0].name: Invalid value: \"object\": spec.roles[].name must not be 'router'");
        assertThat(refusal(deployment("g".repeat(40), "vLLM").namespace("adm").role(role("r".repeat(13))).build()))
                .contains("spec.roles: Invalid value: \"object\": metadata.name and spec.roles[].name together exceed 52");
        assertThat(refusal(deployment("h", "vLLM").namespace("adm").build()))
                .endsWith("spec.roles: Invalid value: 0: spec.roles in body should have at least 1 items");
    }

    @Test
    void admissionKeepsTheEngineImmutable() {
        client.resource(deployment("imm", "vLLM").namespace("adm").role(role("s")).build()).create();

        Throwable thrown = catchThrowable(() -> client.resources(ModelDeployment.class).inNamespace("adm").withName("imm").edit(md -> {
            md.setSpec(new ModelDeploymentSpec(md.getSpec().model(), new EngineSpec("SGLang", null), null, md.getSpec().roles()));
            return md;
        }));

        assertThat(((KubernetesClientException) thrown).getStatus().getMessage())
                .endsWith("spec.engine.name: Invalid value: \"object\": spec.engine.name is immutable; create a new ModelDeployment to change engines");
        assertThat(client.resources(ModelDeployment.class).inNamespace("adm").withName("imm").get().getSpec().engine().name()).isEqualTo("vLLM");
    }

    @Test
    void admissionLetsAGoodResourceAndItsStatusThrough() {
        ModelDeployment created = client.resource(deployment("ok", "SGLang").scaling("decode").router("sglang-gateway").namespace("adm")
                .role(role("prefill").kind("Prefill").grace(45)).role(role("decode").kind("Decode").size(2)).build()).create();

        assertThat(created.getMetadata().getUid()).isNotNull();
    }
}
