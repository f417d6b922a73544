package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.sim.CrdAdmission;
import dev.ebb.operator.sim.ScaleSubresource;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every sample ModelDeployment in src/main/kubernetes/samples would be admitted by the generated CRD and accepted by
 * the operator, and every autoscaler sample beside them drives one of them through its scale subresource.
 */
class PackagedSamplesIT {
    private static final YAMLMapper YAML = new YAMLMapper();

    @Test
    void everySampleIsAdmittedAndAccepted() throws Exception {
        CrdAdmission admission = new CrdAdmission(SimApiServer.generatedCrd());
        List<OlmBundle.Source> samples = BundleWriter.samples();
        List<String> refused = new ArrayList<>();
        for (OlmBundle.Source sample : samples) {
            admission
                    .violations(YAML.readTree(sample.text()), null)
                    .forEach(v -> refused.add(sample.file() + " at admission: " + v));
            if (Specs.RESOLVER.resolve(Serialization.unmarshal(sample.text(), ModelDeployment.class))
                    instanceof Resolution.Rejected r) {
                refused.add(sample.file() + " by the operator: " + r.summary());
            }
        }

        assertThat(samples).extracting(OlmBundle.Source::file).anyMatch(f -> f.endsWith("sglang-prefill-decode.yaml"));
        assertThat(refused).isEmpty();
    }

    @Test
    void theAutoscalerSamplesDriveASampleDeploymentsScaledRoleThroughItsScaleSubresource() throws Exception {
        CustomResourceDefinition crd = SimApiServer.generatedCrd();
        String apiVersion = crd.getSpec().getGroup() + "/"
                + crd.getSpec().getVersions().get(0).getName();
        ScaleSubresource scale =
                ScaleSubresource.of(crd).orElseThrow(() -> new AssertionError("the CRD has no scale subresource"));
        Map<String, JsonNode> deployments = new HashMap<>();
        for (OlmBundle.Source sample : BundleWriter.samples()) {
            JsonNode md = YAML.readTree(sample.text());
            deployments.put(md.path("metadata").path("name").asText(), md);
        }
        List<OlmBundle.Source> autoscalers = BundleWriter.autoscalerSamples();

        assertThat(autoscalers)
                .extracting(OlmBundle.Source::file)
                .anyMatch(f -> f.endsWith("hpa.yaml"))
                .anyMatch(f -> f.endsWith("keda-scaledobject.yaml"));
        for (OlmBundle.Source sample : autoscalers) {
            JsonNode autoscaler = YAML.readTree(sample.text());
            JsonNode spec = autoscaler.path("spec");
            JsonNode behavior;
            int min;
            int max;
            switch (autoscaler.path("kind").asText()) {
                case "HorizontalPodAutoscaler" -> {
                    assertThat(autoscaler.path("apiVersion").asText())
                            .as(sample.file())
                            .isEqualTo("autoscaling/v2");
                    HorizontalPodAutoscaler hpa = Serialization.unmarshal(sample.text(), HorizontalPodAutoscaler.class);
                    assertThat(hpa.getSpec().getAdditionalProperties())
                            .as(sample.file() + ": fields autoscaling/v2 does not have")
                            .isEmpty();
                    assertThat(hpa.getSpec().getBehavior().getScaleDown().getAdditionalProperties())
                            .as(sample.file())
                            .isEmpty();
                    assertThat(hpa.getSpec().getMetrics())
                            .as(sample.file())
                            .isNotEmpty()
                            .allSatisfy(
                                    m -> assertThat(m.getAdditionalProperties()).isEmpty());
                    behavior = spec.path("behavior");
                    min = spec.path("minReplicas").asInt();
                    max = spec.path("maxReplicas").asInt();
                }
                case "ScaledObject" -> {
                    // keda.sh/docs/latest/reference/scaledobject-spec and keda.sh/docs/latest/scalers/prometheus
                    assertThat(autoscaler.path("apiVersion").asText())
                            .as(sample.file())
                            .isEqualTo("keda.sh/v1alpha1");
                    JsonNode trigger = spec.path("triggers").path(0);
                    assertThat(trigger.path("type").asText()).as(sample.file()).isEqualTo("prometheus");
                    assertThat(trigger.path("metadata").path("query").asText())
                            .as(sample.file())
                            .contains("vllm:num_requests_waiting");
                    assertThat(trigger.path("metadata").path("serverAddress").asText())
                            .as(sample.file())
                            .startsWith("http");
                    assertThat(trigger.path("metadata").path("threshold").asText())
                            .as(sample.file())
                            .isNotEmpty();
                    // removed in KEDA 2.12, after its deprecation in 2.10
                    assertThat(trigger.path("metadata").has("metricName"))
                            .as(sample.file())
                            .isFalse();
                    behavior = spec.path("advanced")
                            .path("horizontalPodAutoscalerConfig")
                            .path("behavior");
                    min = spec.path("minReplicaCount").asInt();
                    max = spec.path("maxReplicaCount").asInt();
                }
                default -> throw new AssertionError(sample.file() + " is neither an HPA nor a KEDA ScaledObject");
            }
            JsonNode target = spec.path("scaleTargetRef");
            assertThat(target.path("apiVersion").asText()).as(sample.file()).isEqualTo(apiVersion);
            assertThat(target.path("kind").asText())
                    .as(sample.file())
                    .isEqualTo(crd.getSpec().getNames().getKind());
            JsonNode md = deployments.get(target.path("name").asText());
            assertThat(md)
                    .as(sample.file() + " drives a sample ModelDeployment")
                    .isNotNull();
            assertThat(scale.hasSpecReplicas(md))
                    .as(sample.file() + ": its target sets " + scale.specReplicasPath()
                            + ", without which the API server cannot answer a read of the Scale")
                    .isTrue();
            String role = md.path("spec")
                    .path("scaling")
                    .path("role")
                    .asText(md.path("spec").path("roles").path(0).path("name").asText());
            assertThat(md.path("spec").path("roles"))
                    .as(sample.file())
                    .anyMatch(r -> r.path("name").asText().equals(role));
            if (autoscaler.path("kind").asText().equals("ScaledObject")) {
                assertThat(spec.path("triggers")
                                .path(0)
                                .path("metadata")
                                .path("query")
                                .asText())
                        .as("reads the scaled role's leaders")
                        .contains(target.path("name").asText() + "-" + role + "-r[0-9]+-m0");
            }
            assertThat(min).as(sample.file() + ": a warm replica").isBetween(1, max);
            assertThat(behavior.path("scaleDown")
                            .path("stabilizationWindowSeconds")
                            .asInt())
                    .as(sample.file() + ": a scale-down waits out minutes of lull, within the HPA's 3600 s bound")
                    .isBetween(300, 3600);
        }
    }
}
