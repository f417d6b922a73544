package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.packaging.OlmBundle.Inputs;
import dev.ebb.operator.packaging.OlmBundle.Source;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class OlmBundleTest {
    private static final ObjectMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new ObjectMapper();

    static final String CRD = """
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata:
              name: modeldeployments.serving.ebb.dev
            spec:
              group: serving.ebb.dev
              names: {kind: ModelDeployment, plural: modeldeployments}
              scope: Namespaced
              versions:
              - {name: v1alpha1, served: true, storage: true}
            """;
    static final String SAMPLE = """
            apiVersion: serving.ebb.dev/v1alpha1
            kind: ModelDeployment
            metadata: {name: qwen}
            spec:
              model: {name: Qwen/Qwen3-8B}
              engine: {name: vLLM}
              roles: [{name: server, replicas: 2}]
            """;
    private static final String OPERATOR_RULE = """
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "create", "delete"]}""";
    private static final String CRD_CHECK_RULE = """
            {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list"]}""";
    private static final String UNBOUND_RULE = """
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}""";
    private static final String NAMESPACED_RULE = """
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]}""";

    static String manifests(String deploymentLabels) {
        return "["
                + String.join(
                        ",",
                        """
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "ebb-operator"}}""",
                        clusterRole("operator", OPERATOR_RULE),
                        clusterRole("crd-check", CRD_CHECK_RULE),
                        clusterRole("unbound", UNBOUND_RULE),
                        """
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "leader"},
                 "rules": [%s]}""".formatted(NAMESPACED_RULE),
                        binding("ClusterRoleBinding", "ClusterRole", "operator", "ebb-operator"),
                        binding("ClusterRoleBinding", "ClusterRole", "crd-check", "ebb-operator"),
                        binding("ClusterRoleBinding", "ClusterRole", "unbound", "someone-else"),
                        binding("RoleBinding", "Role", "leader", "ebb-operator"),
                        binding("RoleBinding", "ClusterRole", "view", "ebb-operator"),
                        """
                {"apiVersion": "apps/v1", "kind": "Deployment",
                 "metadata": {"name": "ebb-operator", "labels": {%s}},
                 "spec": {"replicas": 1, "template": {
                   "metadata": {"annotations": {"app.quarkus.io/commit-id": "0123abcd", "prometheus.io/scrape": "true"}},
                   "spec": {"serviceAccountName": "ebb-operator",
                   "containers": [{"name": "ebb-operator", "image": "ghcr.io/ebb-dev/ebb-operator:1.2.3", "resources": {"requests": {"cpu": "100m", "memory": "192Mi"}}}]}}}}""".formatted(deploymentLabels))
                + "]";
    }

    static final String LABELS =
            "\"app.kubernetes.io/name\": \"ebb-operator\", \"app.kubernetes.io/version\": \"1.2.3\"";

    private static String clusterRole(String name, String rule) {
        return """
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "%s"},
                 "rules": [%s]}""".formatted(name, rule);
    }

    private static String binding(String kind, String roleKind, String role, String serviceAccount) {
        return """
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "%s", "metadata": {"name": "%s-binding"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "%s", "name": "%s"},
                 "subjects": [{"kind": "ServiceAccount", "name": "%s"}]}""".formatted(kind, role, roleKind, role, serviceAccount);
    }

    private static final String ICON = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
    private static final SortedMap<String, String> DEFAULT_IMAGES =
            new TreeMap<>(Map.of("vllm", "vllm/vllm-openai:v1", "routing-proxy", "ghcr.io/x/sidecar:v2"));

    static Inputs inputs(String manifests, String crd, String... samples) {
        return new Inputs(
                new Source("kubernetes.json", manifests),
                new Source("crd.yml", crd),
                IntStream.range(0, samples.length)
                        .mapToObj(i -> new Source("sample-" + i + ".yaml", samples[i]))
                        .toList(),
                new Source("icon.svg", ICON),
                DEFAULT_IMAGES);
    }

    private static JsonNode csv(Inputs inputs) throws Exception {
        return YAML.readTree(OlmBundle.render(inputs).get(OlmBundle.CSV_FILE));
    }

    @Test
    void theCsvNamesTheVersionTheImageAndTheOwnedCrd() throws Exception {
        JsonNode csv = csv(inputs(manifests(LABELS), CRD, SAMPLE));

        assertThat(csv.at("/metadata/name").asText()).isEqualTo("ebb-operator.v1.2.3");
        assertThat(csv.at("/spec/version").asText()).isEqualTo("1.2.3");
        assertThat(csv.at("/metadata/annotations/olm.skipRange").asText()).isEqualTo("<1.2.3");
        assertThat(csv.at("/metadata/annotations/containerImage").asText())
                .isEqualTo("ghcr.io/ebb-dev/ebb-operator:1.2.3");
        assertThat(csv.at("/spec/customresourcedefinitions/owned/0/name").asText())
                .isEqualTo("modeldeployments.serving.ebb.dev");
        assertThat(csv.at("/spec/customresourcedefinitions/owned/0/version").asText())
                .isEqualTo("v1alpha1");
        assertThat(csv.at("/spec/customresourcedefinitions/owned/0/kind").asText())
                .isEqualTo("ModelDeployment");
        assertThat(csv.at("/spec/install/spec/deployments/0/name").asText()).isEqualTo("ebb-operator");
        assertThat(csv.at("/spec/install/spec/deployments/0/spec/template/spec/serviceAccountName")
                        .asText())
                .isEqualTo("ebb-operator");
    }

    @Test
    void aPreReleaseVersionIsWrittenInLowerCaseSinceTheCsvsNameMustBeADns1123Subdomain() throws Exception {
        JsonNode csv = csv(inputs(manifests(LABELS.replace("1.2.3", "1.2.3-SNAPSHOT")), CRD, SAMPLE));

        assertThat(csv.at("/metadata/name").asText()).isEqualTo("ebb-operator.v1.2.3-snapshot");
        assertThat(csv.at("/spec/version").asText()).isEqualTo("1.2.3-snapshot");
    }

    @Test
    void theBundleDoesNotCarryTheCommitTheBuildCameFrom() throws Exception {
        JsonNode annotations = csv(inputs(manifests(LABELS), CRD, SAMPLE))
                .at("/spec/install/spec/deployments/0/spec/template/metadata/annotations");

        assertThat(annotations.has(OlmBundle.BUILD_COMMIT_ANNOTATION)).isFalse();
        assertThat(annotations.get("prometheus.io/scrape").asText()).isEqualTo("true");
    }

    @Test
    void theOperatorGetsTheRulesOfTheRolesBoundToItsServiceAccountAndNoOthers() throws Exception {
        JsonNode strategy = csv(inputs(manifests(LABELS), CRD, SAMPLE)).at("/spec/install/spec");

        assertThat(strategy.toString()).doesNotContain("secrets");
    }

    @Test
    void namespacedRulesBecomePermissionsWhateverBindsThemAndOnlyClusterScopedOnesClusterPermissions()
            throws Exception {
        JsonNode strategy = csv(inputs(manifests(LABELS), CRD, SAMPLE)).at("/spec/install/spec");

        // the Pod rule comes from a ClusterRole bound cluster-wide (make deploy watches every namespace), yet OLM must
        // grant it only where the operator watches
        assertThat(strategy.at("/permissions/0/serviceAccountName").asText()).isEqualTo("ebb-operator");
        assertThat(strategy.at("/permissions/0/rules"))
                .containsExactly(JSON.readTree(OPERATOR_RULE), JSON.readTree(NAMESPACED_RULE));
        assertThat(strategy.at("/clusterPermissions/0/serviceAccountName").asText())
                .isEqualTo("ebb-operator");
        assertThat(strategy.at("/clusterPermissions/0/rules")).containsExactly(JSON.readTree(CRD_CHECK_RULE));
    }

    @Test
    void aRuleOnAResourceOfUnknownScopeOrOfBothScopesFailsTheBundle() {
        String unknown = OPERATOR_RULE.replace("\"pods\"", "\"widgets\"");
        String mixed = OPERATOR_RULE.replace("\"pods\"", "\"pods\", \"namespaces\"");

        assertThatThrownBy(
                        () -> OlmBundle.render(inputs(manifests(LABELS).replace(OPERATOR_RULE, unknown), CRD, SAMPLE)))
                .hasMessageContaining("names /widgets, whose scope the bundle does not know");
        assertThatThrownBy(() -> OlmBundle.render(inputs(manifests(LABELS).replace(OPERATOR_RULE, mixed), CRD, SAMPLE)))
                .hasMessageContaining("mixes namespaced and cluster-scoped resources");
    }

    @Test
    void everyInstallModeIsSupported() throws Exception {
        JsonNode modes = csv(inputs(manifests(LABELS), CRD, SAMPLE)).at("/spec/installModes");

        assertThat(modes)
                .extracting(m -> m.get("type").asText())
                .containsExactly("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces");
        assertThat(modes).allMatch(m -> m.get("supported").asBoolean());
    }

    @Test
    void relatedImagesAreTheOperatorsAndEveryDefaultImage() throws Exception {
        JsonNode images = csv(inputs(manifests(LABELS), CRD, SAMPLE)).at("/spec/relatedImages");

        assertThat(images)
                .extracting(i -> i.get("name").asText() + "=" + i.get("image").asText())
                .containsExactly(
                        "ebb-operator=ghcr.io/ebb-dev/ebb-operator:1.2.3",
                        "routing-proxy=ghcr.io/x/sidecar:v2",
                        "vllm=vllm/vllm-openai:v1");
    }

    @Test
    void almExamplesAreTheSamplesAsJson() throws Exception {
        String other = SAMPLE.replace("qwen", "other");
        JsonNode csv = csv(inputs(manifests(LABELS), CRD, SAMPLE, other));

        JsonNode examples =
                JSON.readTree(csv.at("/metadata/annotations/alm-examples").asText());
        assertThat(examples).containsExactly(YAML.readTree(SAMPLE), YAML.readTree(other));
    }

    @Test
    void theBundleIsAnnotatedTheSameInItsMetadataAndItsImage() throws Exception {
        Map<String, String> files = OlmBundle.render(inputs(manifests(LABELS), CRD, SAMPLE));
        JsonNode annotations =
                YAML.readTree(files.get(OlmBundle.ANNOTATIONS_FILE)).get("annotations");
        String dockerfile = files.get(OlmBundle.DOCKERFILE);

        assertThat(annotations
                        .get("operators.operatorframework.io.bundle.package.v1")
                        .asText())
                .isEqualTo(OlmBundle.PACKAGE);
        assertThat(annotations
                        .get("operators.operatorframework.io.bundle.channel.default.v1")
                        .asText())
                .isEqualTo(OlmBundle.CHANNEL);
        annotations
                .properties()
                .forEach(a -> assertThat(dockerfile)
                        .contains("LABEL " + a.getKey() + "=" + a.getValue().asText() + "\n"));
        assertThat(dockerfile)
                .startsWith("# ")
                .contains("FROM scratch\n", "COPY manifests /manifests/\n", "COPY metadata /metadata/\n");
        assertThat(files).containsEntry("manifests/modeldeployments.serving.ebb.dev.crd.yaml", CRD);
    }

    @Test
    void theSameInputsGiveTheSameBytesWhateverOrderTheGeneratorWroteMapsIn() {
        String reorderedLabels =
                "\"app.kubernetes.io/version\": \"1.2.3\", \"app.kubernetes.io/name\": \"ebb-operator\"";
        String container = "{\"name\": \"ebb-operator\", \"image\": \"ghcr.io/ebb-dev/ebb-operator:1.2.3\",";
        String reorderedContainer = "{\"image\": \"ghcr.io/ebb-dev/ebb-operator:1.2.3\", \"name\": \"ebb-operator\",";
        assertThat(manifests(LABELS)).contains(container);

        Map<String, String> written = OlmBundle.render(inputs(manifests(LABELS), CRD, SAMPLE));
        assertThat(OlmBundle.render(inputs(manifests(reorderedLabels), CRD, SAMPLE)))
                .isEqualTo(written);
        // the Deployment's spec is copied into the bundle, so the order of its keys must not reach the bytes
        assertThat(OlmBundle.render(inputs(manifests(LABELS).replace(container, reorderedContainer), CRD, SAMPLE)))
                .isEqualTo(written);
    }

    @Test
    void anInputItCannotUseIsNamedInTheError() {
        assertThatThrownBy(() -> OlmBundle.render(inputs("[{\"kind\": \"Service\"", CRD, SAMPLE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("kubernetes.json cannot be parsed");
        assertThatThrownBy(() -> OlmBundle.render(inputs("[]", CRD, SAMPLE)))
                .hasMessage("kubernetes.json holds 0 Deployments; the bundle installs exactly one, the operator's");
        assertThatThrownBy(() -> OlmBundle.render(inputs(
                        manifests(LABELS).replace("\"serviceAccountName\": \"ebb-operator\",", ""), CRD, SAMPLE)))
                .hasMessage("kubernetes.json has no spec.template.spec.serviceAccountName");
        assertThatThrownBy(() -> OlmBundle.render(
                        inputs(manifests(LABELS), CRD.replace("storage: true", "storage: false"), SAMPLE)))
                .hasMessage("crd.yml has no storage version under spec.versions");
        assertThatThrownBy(() -> OlmBundle.render(inputs(manifests(LABELS), CRD, SAMPLE, "kind: [unclosed")))
                .hasMessageStartingWith("sample-1.yaml cannot be parsed");
        assertThatThrownBy(() -> OlmBundle.render(
                        inputs(manifests(LABELS), CRD, SAMPLE.replace("kind: ModelDeployment", "kind: Pod"))))
                .hasMessage("sample-0.yaml is not a ModelDeployment of serving.ebb.dev/v1alpha1");
        assertThatThrownBy(() -> OlmBundle.render(inputs(manifests(LABELS), "", SAMPLE)))
                .hasMessage("crd.yml is empty");
    }
}
