package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.api.RouterImages;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.config.EbbConfig;
import dev.ebb.operator.config.EbbSettings;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The OLM bundle checked in under bundle/ is the one the current build makes, keeps OLM's and OperatorHub's rules,
 * and installs the operator exactly as `make deploy` does. */
class PackagedBundleIT {
    private static final ObjectMapper YAML = new YAMLMapper();

    @Test
    void theCheckedInBundleIsTheOneThisBuildMakes() throws Exception {
        Map<String, String> rendered = OlmBundle.render(BundleWriter.inputs());
        List<String> stale = new ArrayList<>();
        for (Map.Entry<String, String> file : rendered.entrySet()) {
            Path path = BundleWriter.BUNDLE.resolve(file.getKey());
            if (!Files.isRegularFile(path)) {
                stale.add(path + " is missing");
            } else if (!Files.readString(path).equals(file.getValue())) {
                stale.add(path + " differs from what this build makes");
            }
        }
        for (Path checkedIn : BundleWriter.checkedIn()) {
            if (!rendered.containsKey(BundleWriter.relative(checkedIn))) {
                stale.add(checkedIn + " is no longer part of the bundle");
            }
        }

        assertThat(stale)
                .as("the bundle is stale: run `make bundle` and commit bundle/")
                .isEmpty();
    }

    @Test
    void theBundleKeepsEveryRuleOfOlmsValidationAndOperatorHubsChecks() throws Exception {
        assertThat(BundleRules.broken(OlmBundle.render(BundleWriter.inputs()))).isEmpty();
    }

    private static JsonNode csv() throws Exception {
        return YAML.readTree(OlmBundle.render(BundleWriter.inputs()).get(OlmBundle.CSV_FILE));
    }

    @Test
    void theBundlesDeploymentIsTheOneMakeDeployApplies() throws Exception {
        Deployment applied = PackagedManifests.read().stream()
                .filter(Deployment.class::isInstance)
                .map(Deployment.class::cast)
                .findFirst()
                .orElseThrow();
        JsonNode bundled = csv().at("/spec/install/spec/deployments/0");
        DeploymentSpec bundledSpec = Serialization.unmarshal(bundled.get("spec").toString(), DeploymentSpec.class);
        // the one difference the bundle makes on purpose: no build's commit
        applied.getSpec().getTemplate().getMetadata().getAnnotations().remove(OlmBundle.BUILD_COMMIT_ANNOTATION);

        assertThat(bundled.get("name").asText()).isEqualTo(applied.getMetadata().getName());
        assertThat(bundledSpec).isEqualTo(applied.getSpec());
        // spelled out, the parts a drift would hurt most
        var container = bundledSpec.getTemplate().getSpec().getContainers().get(0);
        var appliedContainer =
                applied.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(container.getImage()).isEqualTo(appliedContainer.getImage());
        assertThat(container.getArgs()).isEqualTo(appliedContainer.getArgs());
        assertThat(container.getEnv()).isEqualTo(appliedContainer.getEnv());
        assertThat(container.getResources()).isEqualTo(appliedContainer.getResources());
        assertThat(container.getLivenessProbe()).isEqualTo(appliedContainer.getLivenessProbe());
        assertThat(container.getReadinessProbe()).isEqualTo(appliedContainer.getReadinessProbe());
        assertThat(container.getStartupProbe()).isEqualTo(appliedContainer.getStartupProbe());
    }

    @Test
    void relatedImagesHoldTheOperatorAndEveryImageItRendersByDefault() throws Exception {
        Set<String> related = new HashSet<>();
        csv().at("/spec/relatedImages")
                .forEach(image -> related.add(image.get("image").asText()));
        EbbConfig.Images defaults = EbbSettings.of(Map.of()).images();
        Set<String> rendered = new HashSet<>();
        for (Engine engine : Engine.values()) {
            rendered.add(defaults.of(engine));
        }
        // the images a router's layout runs: the router, and llm-d's data plane and routing proxy sidecar
        for (RouterKind kind : RouterKind.values()) {
            RouterImages images = defaults.of(kind);
            rendered.addAll(List.of(images.router(), images.dataPlane(), images.routingProxy()));
        }

        assertThat(related)
                .containsAll(rendered)
                .contains(csv().at("/spec/install/spec/deployments/0/spec/template/spec/containers/0/image")
                        .asText());
    }

    @Test
    void everyInstallModeIsSupportedAndItsRbacIsNamespacedButForTheCrdCheckAndTheReadOfNodes() throws Exception {
        JsonNode csv = csv();
        JsonNode strategy = csv.at("/spec/install/spec");

        assertThat(csv.at("/spec/installModes"))
                .extracting(
                        m -> m.get("type").asText() + "=" + m.get("supported").asBoolean())
                .containsExactly(
                        "OwnNamespace=true", "SingleNamespace=true", "MultiNamespace=true", "AllNamespaces=true");
        List<String> clusterWide = new ArrayList<>();
        strategy.at("/clusterPermissions/0/rules")
                .forEach(rule ->
                        rule.get("resources").forEach(r -> clusterWide.add(r.asText() + " " + rule.get("verbs"))));
        assertThat(clusterWide)
                .containsExactlyInAnyOrder(
                        "customresourcedefinitions [\"get\",\"list\"]", "nodes [\"get\",\"list\",\"watch\"]");
        List<String> namespaced = new ArrayList<>();
        strategy.at("/permissions/0/rules")
                .forEach(rule -> rule.get("resources").forEach(r -> namespaced.add(r.asText())));
        assertThat(namespaced)
                .contains("modeldeployments", "pods", "services", "endpointslices", "events", "leases", "deployments");
    }
}
