package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The objects the installing guide has a user apply for OLM, read from the guide itself: everything OLM needs to install the
 * bundle, each naming what the others and the bundle name.
 */
class InstallingGuideOlmTest {
    private static final ObjectMapper YAML = new YAMLMapper();

    /** The YAML block of the guide that holds the Subscription, as objects. */
    private static List<JsonNode> olmObjects() throws Exception {
        String readme = Files.readString(Path.of("docs", "guides", "installing.md"));
        for (String block : readme.split("```yaml\n")) {
            String yaml = block.substring(0, Math.max(0, block.indexOf("```")));
            if (yaml.contains("kind: Subscription")) {
                List<JsonNode> objects = new ArrayList<>();
                try (var parser = new YAMLFactory().createParser(yaml)) {
                    YAML.readValues(parser, JsonNode.class).forEachRemaining(objects::add);
                }
                return objects;
            }
        }
        throw new AssertionError("the installing guide shows no Subscription");
    }

    @Test
    void theGuidesOlmInstallIsCompleteAndAgreesWithTheBundle() throws Exception {
        Map<String, JsonNode> byKind = olmObjects().stream()
                .collect(Collectors.toMap(o -> o.path("kind").asText(), Function.identity()));
        JsonNode annotations = YAML.readTree(
                        Path.of("bundle", "metadata", "annotations.yaml").toFile())
                .path("annotations");

        assertThat(byKind).containsOnlyKeys("Namespace", "OperatorGroup", "CatalogSource", "Subscription");
        String namespace = byKind.get("Namespace").path("metadata").path("name").asText();
        assertThat(byKind.get("OperatorGroup")
                        .path("metadata")
                        .path("namespace")
                        .asText())
                .isEqualTo(namespace);
        JsonNode subscription = byKind.get("Subscription");
        JsonNode catalog = byKind.get("CatalogSource");
        assertThat(subscription.path("metadata").path("namespace").asText()).isEqualTo(namespace);
        assertThat(subscription.path("spec").path("source").asText())
                .isEqualTo(catalog.path("metadata").path("name").asText());
        assertThat(subscription.path("spec").path("sourceNamespace").asText())
                .isEqualTo(catalog.path("metadata").path("namespace").asText());
        assertThat(subscription.path("spec").path("name").asText())
                .isEqualTo(annotations
                        .path("operators.operatorframework.io.bundle.package.v1")
                        .asText());
        assertThat(subscription.path("spec").path("channel").asText())
                .isEqualTo(annotations
                        .path("operators.operatorframework.io.bundle.channels.v1")
                        .asText());
    }
}
