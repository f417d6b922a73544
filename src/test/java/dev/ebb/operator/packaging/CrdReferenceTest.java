package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The ModelDeployment field reference: what it shows of a field, and that the committed one matches the CRD. */
class CrdReferenceTest {
    private static final String CRD = """
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            spec:
              group: serving.ebb.dev
              names: {kind: ModelDeployment, shortNames: [md]}
              versions:
              - name: v1alpha1
                schema:
                  openAPIV3Schema:
                    properties:
                      spec:
                        properties:
                          roles:
                            type: array
                            items:
                              type: object
                              required: [name]
                              properties:
                                name: {type: string, maxLength: 20, description: "DNS label naming the role."}
                                replicas: {type: integer, minimum: 0, maximum: 1024, description: "Replicas; 1 when unset."}
                                env:
                                  type: array
                                  items: {type: object, properties: {name: {type: string}}}
                              x-kubernetes-validations:
                              - {fieldPath: .name, rule: "self.name != 'router'", message: "spec.roles[].name must not be 'router'"}
                        type: object
                      status:
                        properties:
                          phase: {type: string, enum: [Ready, Degraded], description: "Where it stands."}
                        type: object
            """;

    @Test
    void aFieldShowsItsTypeDefaultLimitsAndDescriptionAndARuleItsMessage() throws Exception {
        String reference = CrdReference.render(CRD);

        assertThat(reference)
                .contains("`serving.ebb.dev/v1alpha1`, kind `ModelDeployment`, short name `md`")
                .contains("| `spec.roles` | list of object | – | – | – |")
                .contains(
                        "| `spec.roles[].name` | string, required | – | at most 20 characters | DNS label naming the role. |")
                .contains("| `spec.roles[].replicas` | integer | `1` | 0..1024 | Replicas; 1 when unset. |")
                .contains("| `spec.roles[].env` | list of object | – | – | as in Kubernetes' own type of that name |")
                .contains("- on `spec.roles[].name`: spec.roles[].name must not be 'router'")
                .contains("| `status.phase` | string | – | one of `Ready`, `Degraded` | Where it stands. |");
        // Kubernetes' own types are listed, not expanded
        assertThat(reference).doesNotContain("spec.roles[].env[].name");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "How long a leaving replica may take, 30..86400; 240 when unset. Raise it for long generations.|`240`",
                "Protocol (default): the role's Pods refuse eviction. Evict: plain evictions.|`Protocol`",
                "0 (default): each old replica is retired first. 1: the replacement is created first.|`0`",
                "Replicas of this role; 1 when unset.|`1`",
                "The served model name.|''",
            })
    void theDefaultIsReadFromTheDescriptionAsTheCrdStatesIt(String description, String expected) {
        assertThat(CrdReference.defaultOf(description).orElse("")).isEqualTo(expected);
    }

    @Test
    void theCommittedReferenceMatchesTheBundlesCrd() throws Exception {
        String current = CrdReference.render(Files.readString(CrdReference.CRD));

        assertThat(Files.readString(CrdReference.REFERENCE))
                .as("%s is stale: run `make reference`", CrdReference.REFERENCE)
                .isEqualTo(current);
    }
}
