package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each mirrored rule catches the bundle that breaks it, and a bundle as OlmBundle writes it breaks none. */
class BundleRulesTest {
    private static SortedMap<String, String> bundle() {
        return OlmBundle.render(OlmBundleTest.inputs(
                OlmBundleTest.manifests(OlmBundleTest.LABELS), OlmBundleTest.CRD, OlmBundleTest.SAMPLE));
    }

    @Test
    void theBundleAsWrittenKeepsEveryRule() {
        assertThat(BundleRules.broken(bundle())).isEmpty();
    }

    private static Arguments csv(String rule, UnaryOperator<String> change) {
        return Arguments.of(rule, OlmBundle.CSV_FILE, change);
    }

    static Stream<Arguments> breakages() {
        return Stream.of(
                csv("csv.go validateVersionKind", t -> t.replace("kind: ClusterServiceVersion", "kind: Csv")),
                csv(
                        "csv.go parseCSVNameFormat",
                        t -> t.replace("name: ebb-operator.v1.2.3", "name: Ebb_Operator.v1.2.3")),
                csv(
                        "good_practices.go checkBundleName",
                        t -> t.replace("name: ebb-operator.v1.2.3", "name: ebb-operator-1.2.3")),
                csv(
                        "csv name and version",
                        t -> t.replace("version: \"1.2.3\"", "version: \"1.2.4\"")
                                .replace("version: 1.2.3", "version: 1.2.4")),
                csv(
                        "operatorhub.go checkSpecVersion",
                        t -> t.replace("version: \"1.2.3\"", "version: \"one\"")
                                .replace("version: 1.2.3", "version: one")),
                csv("typecheck.go checkEmptyFields", t -> t.replace("  displayName: Ebb\n", "")),
                csv(
                        "csv.go validateExamplesAnnotations",
                        t -> t.replaceFirst("(?s)alm-examples: \\|-\\n.*?\\n    capabilities", "capabilities")),
                csv(
                        "csv.go matchGVKProvidedAPIs",
                        t -> t.replace(
                                "\"apiVersion\": \"serving.ebb.dev/v1alpha1\"",
                                "\"apiVersion\": \"serving.ebb.dev/v2\"")),
                csv("csv.go validateInstallModes", t -> t.replace("supported: true", "supported: false")),
                csv("csv.go validateInstallModes", t -> t.replace("type: SingleNamespace", "type: OwnNamespace")),
                csv(
                        "csv.go validateMinKubeVersion",
                        t -> t.replace("minKubeVersion: 1.28.0", "minKubeVersion: latest")),
                csv(
                        "operatorhub.go checkSpecProviderName",
                        t -> t.replace("  provider:\n    name: Ebb\n", "  provider:\n")),
                csv("operatorhub.go checkSpecMaintainers", t -> t.replace(OlmBundle.MAINTAINER_EMAIL, "nobody")),
                csv(
                        "operatorhub.go checkSpecLinks",
                        t -> t.replace("url: " + OlmBundle.PROJECT_URL + "\n  icon", "url: not a url\n  icon")),
                csv(
                        "listing: metadata.annotations.createdAt",
                        t -> t.replace("createdAt: " + OlmBundle.CREATED_AT, "createdAt: yesterday")),
                csv("operatorhub.go checkSpecIcon", t -> t.replace("mediatype: image/svg+xml", "mediatype: image/bmp")),
                csv("standardcategories.go", t -> t.replace("categories: AI/Machine Learning", "categories: LLMs")),
                csv("annotations.go ValidateAnnotationNames", t -> t.replace("olm.skipRange:", "olm.skiprange:")),
                csv("standardcapabilities.go", t -> t.replace("capabilities: Basic Install", "capabilities: Magic")),
                csv("good_practices.go validateResourceRequests", t -> t.replace("cpu: 100m", "")),
                csv(
                        "good_practices.go validateCrdDescriptions",
                        t -> t.replaceFirst("description: \"An inference engine's[^\"]*\"", "description: \"\"")),
                csv(
                        "good_practices.go validateRBACForCRDsWith",
                        t -> t.replace(
                                "- get\n                - list",
                                "- get\n                - list\n                - create")),
                csv("bundle.go validateOwnedCRDs", t -> t.replace("version: v1alpha1", "version: v1beta1")),
                csv(
                        "bundle.go validateRelatedImages",
                        t -> t.replace("image: vllm/vllm-openai:v1", "image: \"vllm/VLLM:v1\"")),
                csv(
                        "relatedImages: the operator's image",
                        t -> t.replace(
                                        "image: ghcr.io/ebb-dev/ebb-operator:1.2.3\n  install",
                                        "image: ghcr.io/ebb-dev/other:1.2.3\n  install")
                                .replaceFirst(
                                        "(relatedImages:\\n    - name: ebb-operator\\n      image: )ghcr.io/ebb-dev/ebb-operator:1.2.3",
                                        "$1ghcr.io/ebb-dev/other:1.2.3")),
                Arguments.of(
                        "good_practices.go validateHubChannels", OlmBundle.ANNOTATIONS_FILE, (UnaryOperator<String>)
                                t -> t.replace(": candidate", ": alpha")),
                Arguments.of(
                        "bundle annotations: the default channel", OlmBundle.ANNOTATIONS_FILE, (UnaryOperator<String>)
                                t -> t.replace("channel.default.v1: candidate", "channel.default.v1: stable")),
                Arguments.of("bundle.Dockerfile", OlmBundle.DOCKERFILE, (UnaryOperator<String>)
                        t -> t.replace("package.v1=", "package.v2=")),
                Arguments.of(
                        "removed_apis.go validateDeprecatedAPIs",
                        "manifests/modeldeployments.serving.ebb.dev.crd.yaml",
                        (UnaryOperator<String>) t -> OlmBundleTest.CRD.replace(
                                "apiVersion: apiextensions.k8s.io/v1", "apiVersion: apiextensions.k8s.io/v1beta1")),
                Arguments.of("bundle.go validateOwnedCRDs", "manifests/other.crd.yaml", (UnaryOperator<String>)
                        t -> OlmBundleTest.CRD.replace(
                                "name: modeldeployments.serving.ebb.dev", "name: others.serving.ebb.dev")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("breakages")
    void aBundleThatBreaksARuleFailsItByName(String rule, String file, UnaryOperator<String> change) {
        Map<String, String> files = new TreeMap<>(bundle());
        String before = files.getOrDefault(file, "");
        String after = change.apply(before);
        assertThat(after).as("the change to " + file + " applies").isNotEqualTo(before);
        files.put(file, after);

        assertThat(BundleRules.broken(files)).anyMatch(broken -> broken.startsWith(rule));
    }
}
