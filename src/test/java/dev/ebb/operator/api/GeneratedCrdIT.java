package dev.ebb.operator.api;

import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

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
        JSONSchemaProps replicas =
                spec.getProperties().get("scaling").getProperties().get("replicas");
        assertBounds(replicas, 0, 1024);
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
        assertThat(enumOf(spec.getProperties().get("engine").getProperties().get("name")))
                .containsExactlyInAnyOrder("vLLM", "SGLang");
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
        assertThat(rule(role.getXKubernetesValidations(), "-r[0-9]+$").getMessage())
                .contains("spec.roles[].name");
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
        assertThat(fit.getRule())
                .contains("self.router.name == 'vllm-router' && self.engine.name == 'vLLM'")
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
        ValidationRule length =
                rule(version.getSchema().getOpenAPIV3Schema().getXKubernetesValidations(), "size(self.metadata.name)");
        assertThat(length.getRule()).contains("<= 52");
        assertThat(length.getMessage()).contains("metadata.name and spec.roles[].name");
    }

    @Test
    void takeOverRoleTakesNoExtraArgs() {
        ValidationRule exclusive = rule(role.getXKubernetesValidations(), "self.extraArgs");
        assertThat(exclusive.getFieldPath()).isEqualTo(".extraArgs");
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
        return rules.stream()
                .filter(r -> r.getRule().contains(fragment))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no rule containing " + fragment + " in " + rules));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.ebb.operator.api.AdmissionCases#refused")
    void admissionRefusesBadResourcesWithTheCrdsOwnMessages(AdmissionCases.Refused refused) {
        refused.checkAgainst(client);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.ebb.operator.api.AdmissionCases#admitted")
    void admissionLetsGoodResourcesThrough(AdmissionCases.Admitted admitted) {
        admitted.checkAgainst(client);
    }

    @Test
    void admissionKeepsTheEngineImmutable() {
        AdmissionCases.checkEngineStaysImmutable(client);
    }

    @Test
    void aStatusWriteFromAStaleReadIsRefused() {
        AdmissionCases.checkStaleStatusWriteIsRefused(client);
    }

    @Test
    void refusesAJsonPatchThatDoesNotApply() {
        AdmissionCases.checkUnappliableJsonPatchIsRefused(client);
    }
}
