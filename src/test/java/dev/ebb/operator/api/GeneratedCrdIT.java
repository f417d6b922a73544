package dev.ebb.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reads the CRD the build generated (Quarkus writes it while augmenting the application, before these tests run)
 * and checks that every admission rule of the API is in it.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class GeneratedCrdIT {
    static final Path CRD = Path.of("target", "kubernetes", "modeldeployments.serving.ebb.dev-v1.yml");

    @Inject
    KubernetesClient client;

    private CustomResourceDefinition crd;
    private CustomResourceDefinitionVersion version;
    private JSONSchemaProps spec;
    private JSONSchemaProps role;

    @BeforeEach
    void load() throws IOException {
        try (InputStream in = Files.newInputStream(CRD)) {
            crd = client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        }
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
    void printerColumns() {
        assertThat(version.getAdditionalPrinterColumns())
                .extracting(c -> c.getName() + "=" + c.getJsonPath())
                .containsExactlyInAnyOrder(
                        "Engine=.spec.engine.name",
                        "Roles=.status.rolesSummary",
                        "Phase=.status.phase",
                        "Retirement=.status.retirement.state",
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
}
