package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class RenderedFieldsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String RENDERED = """
            {"metadata": {"name": "r", "labels": {"a": "1"}},
             "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "picker", "image": "p:1", "args": ["--x", "1"]}]}}}}""";

    record Case(String name, String actual, boolean held) {}

    static Stream<Case> cases() {
        return Stream.of(
                new Case("as written", RENDERED, true),
                new Case("defaults and status added, a container filled in", """
                        {"metadata": {"name": "r", "labels": {"a": "1"}, "annotations": {"deployment.kubernetes.io/revision": "1"},
                                      "resourceVersion": "7"},
                         "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate"}, "template": {"spec": {"dnsPolicy": "ClusterFirst",
                                  "containers": [{"name": "picker", "image": "p:1", "args": ["--x", "1"], "imagePullPolicy": "IfNotPresent"}]}}},
                         "status": {"readyReplicas": 1}}""", true),
                new Case(
                        "the same number written another way",
                        RENDERED.replace("\"replicas\": 1", "\"replicas\": 1.0"),
                        true),
                new Case("a value changed by hand", RENDERED.replace("\"replicas\": 1", "\"replicas\": 5"), false),
                new Case("a label removed", RENDERED.replace("\"labels\": {\"a\": \"1\"}", "\"labels\": {}"), false),
                new Case(
                        "an argument added to a list",
                        RENDERED.replace("[\"--x\", \"1\"]", "[\"--x\", \"1\", \"--y\"]"),
                        false),
                new Case("list elements swapped", RENDERED.replace("[\"--x\", \"1\"]", "[\"1\", \"--x\"]"), false),
                new Case("a field taken away", RENDERED.replace("\"image\": \"p:1\", ", ""), false),
                new Case(
                        "an object where a value was",
                        RENDERED.replace("\"replicas\": 1", "\"replicas\": {\"n\": 1}"),
                        false),
                new Case("nothing there", "null", false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void anObjectHoldsItsRenderingWhateverWasAddedAndNothingChangedOrTakenAway(Case c) throws Exception {
        JsonNode rendered = JSON.readTree(RENDERED);
        JsonNode actual = JSON.readTree(c.actual());

        assertThat(RenderedFields.heldBy(rendered, actual)).isEqualTo(c.held());
    }
}
