package dev.ebb.operator.packaging;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;

/**
 * The rules an OLM bundle must keep, as the operator framework's bundle validation and OperatorHub's checks state
 * them, for a machine with no operator-sdk: each check names the upstream rule it mirrors (file and tag). Only what
 * this project's bundle can break is mirrored; both errors and the warnings OperatorHub asks authors to fix count.
 * Pure: the bundle's files in, the broken rules out, each as "rule: what is wrong".
 */
final class BundleRules {
    private static final ObjectMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new ObjectMapper();
    /** k8s.io/apimachinery's IsDNS1123Subdomain and IsValidLabelValue, which parseCSVNameFormat applies to the name. */
    private static final Pattern DNS_1123_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
    /** The semver pattern of checkBundleName (good_practices.go at operator-framework/api v0.45.0). */
    private static final Pattern SEMVER = Pattern.compile(
            "(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?");

    private static final Pattern EMAIL = Pattern.compile("[^@\\s<>]+@[^@\\s<>]+\\.[^@\\s<>]+");
    /** validMediatypes in pkg/validation/internal/operatorhub.go at operator-framework/api v0.45.0. */
    private static final Set<String> ICON_MEDIA_TYPES = Set.of("image/gif", "image/jpeg", "image/png", "image/svg+xml");
    /**
     * Categories both lists accept: validCategories in pkg/validation/internal/standardcategories.go at
     * operator-framework/api v0.45.0, intersected with categories.json of redhat-openshift-ecosystem/community-operators-pipeline
     * at f42360ce5 (the community catalog's list).
     */
    private static final Set<String> CATEGORIES = Set.of(
            "AI/Machine Learning",
            "Application Runtime",
            "Big Data",
            "Cloud Provider",
            "Developer Tools",
            "Database",
            "Integration & Delivery",
            "Logging & Tracing",
            "Monitoring",
            "Modernization & Migration",
            "Networking",
            "OpenShift Optional",
            "Security",
            "Storage",
            "Streaming & Messaging");
    /** validCapabilities in pkg/validation/internal/standardcapabilities.go at operator-framework/api v0.45.0. */
    private static final Set<String> CAPABILITIES =
            Set.of("Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights", "Auto Pilot");
    /** max_bundle_size in pkg/validation/internal/bundle.go at operator-framework/api v0.45.0: 1 MiB gzipped. */
    private static final long MAX_BUNDLE_GZIPPED = 1 << 20;

    private static final String BUNDLE_PREFIX = "operators.operatorframework.io.bundle.";
    /**
     * An image pullspec, as ParseNormalizedNamed reads one: [domain[:port]/]path[:tag][@digest], from the grammar of
     * vendor/github.com/distribution/reference/regexp.go (at operator-lifecycle-manager v0.46.0), IPv6 hosts left out.
     */
    private static final Pattern IMAGE_REFERENCE = Pattern.compile(
            "(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?"
                    + "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
                    + "(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?");

    private BundleRules() {}

    /** Every rule the bundle breaks; empty when it keeps them all. */
    static List<String> broken(Map<String, String> files) {
        List<String> broken = new ArrayList<>();
        JsonNode csv = read(YAML, files.get(OlmBundle.CSV_FILE), OlmBundle.CSV_FILE, broken);
        JsonNode metadata = read(YAML, files.get(OlmBundle.ANNOTATIONS_FILE), OlmBundle.ANNOTATIONS_FILE, broken);
        if (csv == null || metadata == null) {
            return broken;
        }
        List<JsonNode> manifests = files.entrySet().stream()
                .filter(f -> f.getKey().startsWith("manifests/") && !f.getKey().equals(OlmBundle.CSV_FILE))
                .map(f -> read(YAML, f.getValue(), f.getKey(), broken))
                .filter(java.util.Objects::nonNull)
                .toList();
        removedApis(manifests, broken);
        listing(csv, broken);
        List<JsonNode> crds = files.entrySet().stream()
                .filter(f -> f.getKey().startsWith("manifests/") && !f.getKey().equals(OlmBundle.CSV_FILE))
                .map(f -> read(YAML, f.getValue(), f.getKey(), broken))
                .filter(n -> n != null
                        && "CustomResourceDefinition".equals(n.path("kind").asText()))
                .toList();
        versionKind(csv, broken);
        name(csv, broken);
        requiredFields(csv, broken);
        examples(csv, broken);
        installModes(csv, broken);
        minKubeVersion(csv, broken);
        operatorHub(csv, broken);
        categoriesAndCapabilities(csv, broken);
        annotationNames(csv, broken);
        goodPractices(csv, metadata, broken);
        ownedCrds(csv, crds, broken);
        relatedImages(csv, broken);
        bundleMetadata(metadata, files.get(OlmBundle.DOCKERFILE), broken);
        size(files, broken);
        return broken;
    }

    // validateVersionKind, pkg/validation/internal/csv.go at operator-framework/api v0.45.0
    private static void versionKind(JsonNode csv, List<String> broken) {
        if (!"operators.coreos.com/v1alpha1".equals(csv.path("apiVersion").asText())
                || !"ClusterServiceVersion".equals(csv.path("kind").asText())) {
            broken.add(
                    "csv.go validateVersionKind: apiVersion/kind are not operators.coreos.com/v1alpha1 ClusterServiceVersion");
        }
    }

    // parseCSVNameFormat (csv.go) and checkBundleName (good_practices.go) at operator-framework/api v0.45.0
    private static void name(JsonNode csv, List<String> broken) {
        String name = csv.at("/metadata/name").asText();
        if (!DNS_1123_SUBDOMAIN.matcher(name).matches()
                || name.length() > 63
                || !LABEL_VALUE.matcher(name).matches()) {
            broken.add("csv.go parseCSVNameFormat: metadata.name " + name
                    + " is not a DNS-1123 subdomain usable as a label value");
        }
        String[] parts = name.split("\\.v", -1);
        if (parts.length != 2 || !SEMVER.matcher(parts[1]).matches()) {
            broken.add(
                    "good_practices.go checkBundleName: metadata.name " + name + " is not <operator-name>.v<semver>");
        }
        if (!csv.at("/spec/version").asText().equals(parts.length == 2 ? parts[1] : null)) {
            broken.add("csv name and version: spec.version is not the version metadata.name carries");
        }
    }

    // checkEmptyFields, pkg/validation/internal/typecheck.go at operator-framework/api v0.45.0: the spec's fields
    // without omitempty (ClusterServiceVersionSpec in pkg/operators/v1alpha1/clusterserviceversion_types.go) are
    // required
    private static void requiredFields(JsonNode csv, List<String> broken) {
        for (String pointer : List.of("/spec/displayName", "/spec/install/strategy")) {
            if (csv.at(pointer).asText().isEmpty()) {
                broken.add("typecheck.go checkEmptyFields: " + pointer + " is missing");
            }
        }
        if (!csv.at("/spec/install/spec/deployments").isArray()
                || csv.at("/spec/install/spec/deployments").isEmpty()) {
            broken.add("good_practices.go validateResourceRequests: no deployment to install in the CSV");
        }
    }

    // validateExamplesAnnotations and matchGVKProvidedAPIs, pkg/validation/internal/csv.go at operator-framework/api
    // v0.45.0
    private static void examples(JsonNode csv, List<String> broken) {
        JsonNode examples =
                read(JSON, csv.at("/metadata/annotations/alm-examples").asText(null), "alm-examples", broken);
        if (examples == null || !examples.isArray()) {
            broken.add("csv.go validateExamplesAnnotations: alm-examples is missing or not a JSON array");
            return;
        }
        Set<String> provided = new HashSet<>();
        for (JsonNode owned : csv.at("/spec/customresourcedefinitions/owned")) {
            String group = owned.path("name").asText().replaceFirst("^[^.]*\\.", "");
            provided.add(group + "/" + owned.path("version").asText() + "/"
                    + owned.path("kind").asText());
        }
        Set<String> exampled = new HashSet<>();
        for (JsonNode example : examples) {
            String gvk = example.path("apiVersion").asText() + "/"
                    + example.path("kind").asText();
            exampled.add(gvk);
            if (!provided.contains(gvk)) {
                broken.add("csv.go matchGVKProvidedAPIs: example " + gvk + " must have a provided API");
            }
        }
        provided.stream()
                .filter(gvk -> !exampled.contains(gvk))
                .forEach(gvk -> broken.add(
                        "csv.go matchGVKProvidedAPIs: provided API " + gvk + " should have an example annotation"));
    }

    // validateInstallModes, pkg/validation/internal/csv.go at operator-framework/api v0.45.0
    private static void installModes(JsonNode csv, List<String> broken) {
        JsonNode modes = csv.at("/spec/installModes");
        if (!modes.isArray() || modes.isEmpty()) {
            broken.add("csv.go validateInstallModes: install modes not found");
            return;
        }
        Set<String> seen = new HashSet<>();
        boolean anySupported = false;
        for (JsonNode mode : modes) {
            if (!seen.add(mode.path("type").asText())) {
                broken.add("csv.go validateInstallModes: duplicate install modes present");
            }
            if (!OlmBundle.INSTALL_MODES.contains(mode.path("type").asText())) {
                broken.add("clusterserviceversion_types.go InstallModeType: "
                        + mode.path("type").asText() + " is no install mode");
            }
            anySupported |= mode.path("supported").asBoolean();
        }
        if (!anySupported) {
            broken.add("csv.go validateInstallModes: none of InstallModeTypes are supported");
        }
    }

    // validateMinKubeVersion (csv.go) and checkSpecMinKubeVersion (operatorhub.go) at operator-framework/api v0.45.0
    private static void minKubeVersion(JsonNode csv, List<String> broken) {
        if (!SEMVER.matcher(csv.at("/spec/minKubeVersion").asText()).matches()) {
            broken.add("csv.go validateMinKubeVersion: spec.minKubeVersion is missing or not a semantic version");
        }
    }

    // validateHubCSVSpecV2, pkg/validation/internal/operatorhubv2.go at operator-framework/api v0.45.0 (its checks are
    // in operatorhub.go): provider name, maintainers, links, version, icon
    private static void operatorHub(JsonNode csv, List<String> broken) {
        if (csv.at("/spec/provider/name").asText().isEmpty()) {
            broken.add("operatorhub.go checkSpecProviderName: csv.Spec.Provider.Name not specified");
        }
        for (JsonNode maintainer : csv.at("/spec/maintainers")) {
            if (maintainer.path("name").asText().isEmpty()
                    || !EMAIL.matcher(maintainer.path("email").asText()).matches()) {
                broken.add("operatorhub.go checkSpecMaintainers: a maintainer lacks a name or a valid email");
            }
        }
        for (JsonNode link : csv.at("/spec/links")) {
            if (link.path("name").asText().isEmpty()
                    || !absoluteUrl(link.path("url").asText())) {
                broken.add("operatorhub.go checkSpecLinks: a link lacks a name or a valid url");
            }
        }
        if (!SEMVER.matcher(csv.at("/spec/version").asText()).matches()) {
            broken.add("operatorhub.go checkSpecVersion: csv.Spec.Version must be set");
        }
        JsonNode icons = csv.at("/spec/icon");
        if (!icons.isArray() || icons.size() != 1) {
            broken.add("operatorhub.go checkSpecIcon: csv.Spec.Icon not specified, or more than one element");
        } else if (icons.get(0).path("base64data").asText().isEmpty()
                || !ICON_MEDIA_TYPES.contains(icons.get(0).path("mediatype").asText())) {
            broken.add("operatorhub.go checkSpecIcon: the icon lacks data or a valid mediatype");
        }
        // what OperatorHub's listing shows beside the name: no validator at operator-framework/api v0.45.0 requires
        // these (validateHubCSVSpec in operatorhub.go checks the list above), the bundle keeps them all the same
        for (String pointer : List.of(
                "/metadata/annotations/description", "/metadata/annotations/containerImage", "/spec/description")) {
            if (csv.at(pointer).asText().isEmpty()) {
                broken.add("listing: " + pointer + " is missing");
            }
        }
    }

    // ValidateAnnotationNames, pkg/validation/internal/annotations.go at operator-framework/api v0.45.0: OLM's
    // case-sensitive annotation keys in their exact case
    private static void annotationNames(JsonNode csv, List<String> broken) {
        Set<String> caseSensitive = Set.of(
                "olm.operatorGroup",
                "olm.operatorNamespace",
                "olm.targetNamespaces",
                "olm.providedAPIs",
                "olm.skipRange");
        csv.at("/metadata/annotations")
                .fieldNames()
                .forEachRemaining(key -> caseSensitive.stream()
                        .filter(known -> known.equalsIgnoreCase(key) && !known.equals(key))
                        .forEach(known -> broken.add("annotations.go ValidateAnnotationNames: " + key
                                + " uses wrong case and should be " + known)));
    }

    // validateCategories (standardcategories.go) and validateCapabilities (standardcapabilities.go) at
    // operator-framework/api v0.45.0
    private static void categoriesAndCapabilities(JsonNode csv, List<String> broken) {
        for (String category :
                csv.at("/metadata/annotations/categories").asText().split(",")) {
            if (!CATEGORIES.contains(category.strip())) {
                broken.add("standardcategories.go: category \"" + category.strip() + "\" is not one OperatorHub lists");
            }
        }
        if (!CAPABILITIES.contains(csv.at("/metadata/annotations/capabilities").asText())) {
            broken.add("standardcapabilities.go: capabilities is not one of " + CAPABILITIES);
        }
    }

    // validateGoodPracticesFrom, pkg/validation/internal/good_practices.go at operator-framework/api v0.45.0
    private static void goodPractices(JsonNode csv, JsonNode metadata, List<String> broken) {
        for (JsonNode deployment : csv.at("/spec/install/spec/deployments")) {
            for (JsonNode container : deployment.at("/spec/template/spec/containers")) {
                JsonNode requests = container.at("/resources/requests");
                if (requests.path("cpu").asText().isEmpty()
                        || requests.path("memory").asText().isEmpty()) {
                    broken.add("good_practices.go validateResourceRequests: container "
                            + container.path("name").asText() + " has no CPU and memory requests");
                }
            }
        }
        for (JsonNode owned : csv.at("/spec/customresourcedefinitions/owned")) {
            if (owned.path("description").asText().isEmpty()) {
                broken.add("good_practices.go validateCrdDescriptions: owned CRD "
                        + owned.path("name").asText() + " has an empty description");
            }
        }
        JsonNode annotations = metadata.path("annotations");
        List<String> channels = new ArrayList<>(
                List.of(annotations.path(BUNDLE_PREFIX + "channels.v1").asText().split(",")));
        channels.add(annotations.path(BUNDLE_PREFIX + "channel.default.v1").asText());
        for (String channel : channels) {
            if (!channel.isEmpty()
                    && !channel.startsWith("candidate")
                    && !channel.startsWith("stable")
                    && !channel.startsWith("fast")) {
                broken.add("good_practices.go validateHubChannels: channel " + channel
                        + " is not candidate*, stable* or fast*");
            }
        }
        for (String permissions : List.of("permissions", "clusterPermissions")) {
            for (JsonNode permission : csv.at("/spec/install/spec/" + permissions)) {
                for (JsonNode rule : permission.path("rules")) {
                    boolean crds = contains(rule.path("apiGroups"), "apiextensions.k8s.io")
                            && (contains(rule.path("resources"), "customresourcedefinitions")
                                    || contains(rule.path("resources"), "*"));
                    boolean writes = contains(rule.path("verbs"), "create")
                            || contains(rule.path("verbs"), "patch")
                            || contains(rule.path("verbs"), "*");
                    if (crds && writes) {
                        broken.add("good_practices.go validateRBACForCRDsWith: the CSV may create CRDs; OLM owns them");
                    }
                }
            }
        }
    }

    /**
     * API versions Kubernetes has removed, which OperatorHub's community checks refuse in a bundle (the community suite
     * runs validateDeprecatedAPIs, pkg/validation/internal/removed_apis.go at operator-framework/api v0.45.0:
     * getRemovedAPIsOn1_22From, _1_25From, _1_26From; operator-test-playbooks' validate_operator_bundle role runs it).
     */
    private static final Set<String> REMOVED_API_VERSIONS = Set.of(
            "apiextensions.k8s.io/v1beta1",
            "scheduling.k8s.io/v1beta1",
            "rbac.authorization.k8s.io/v1beta1",
            "apiregistration.k8s.io/v1beta1",
            "authentication.k8s.io/v1beta1",
            "authorization.k8s.io/v1beta1",
            "admissionregistration.k8s.io/v1beta1",
            "coordination.k8s.io/v1beta1",
            "extensions/v1beta1",
            "networking.k8s.io/v1beta1",
            "storage.k8s.io/v1beta1",
            "certificates.k8s.io/v1beta1",
            "batch/v1beta1",
            "discovery.k8s.io/v1beta1",
            "events.k8s.io/v1beta1",
            "autoscaling/v2beta1",
            "autoscaling/v2beta2",
            "policy/v1beta1",
            "node.k8s.io/v1beta1");

    /**
     * What OperatorHub's listing shows beside the validators' fields: the repository, the image and when the operator
     * was made, as the CSV annotations of operator-framework/api's own sample bundles carry them
     * (pkg/validation/testdata/valid_bundle at v0.45.0: createdAt, containerImage, repository); none is checked there.
     */
    private static void listing(JsonNode csv, List<String> broken) {
        JsonNode annotations = csv.at("/metadata/annotations");
        if (!absoluteUrl(annotations.path("repository").asText())) {
            broken.add("listing: metadata.annotations.repository is not a URL");
        }
        if (annotations.path("containerImage").asText().isEmpty()) {
            broken.add("listing: metadata.annotations.containerImage is missing");
        }
        try {
            java.time.OffsetDateTime.parse(annotations.path("createdAt").asText());
        } catch (java.time.format.DateTimeParseException e) {
            broken.add("listing: metadata.annotations.createdAt is not an RFC 3339 time: "
                    + annotations.path("createdAt").asText());
        }
    }

    private static void removedApis(List<JsonNode> manifests, List<String> broken) {
        manifests.stream()
                .filter(m -> REMOVED_API_VERSIONS.contains(m.path("apiVersion").asText()))
                .forEach(m -> broken.add("removed_apis.go validateDeprecatedAPIs: "
                        + m.path("kind").asText() + " " + m.at("/metadata/name").asText() + " uses "
                        + m.path("apiVersion").asText() + ", which Kubernetes has removed"));
    }

    // validateOwnedCRDs, pkg/validation/internal/bundle.go at operator-framework/api v0.45.0
    private static void ownedCrds(JsonNode csv, List<JsonNode> crds, List<String> broken) {
        Set<String> inBundle = new HashSet<>();
        for (JsonNode crd : crds) {
            for (JsonNode version : crd.at("/spec/versions")) {
                if (!inBundle.add(crd.at("/metadata/name").asText() + "/"
                        + version.path("name").asText())) {
                    broken.add("bundle.go validateOwnedCRDs: duplicate CRD "
                            + crd.at("/metadata/name").asText());
                }
            }
        }
        Set<String> owned = new HashSet<>();
        for (JsonNode crd : csv.at("/spec/customresourcedefinitions/owned")) {
            String key = crd.path("name").asText() + "/" + crd.path("version").asText();
            owned.add(crd.path("name").asText());
            if (!inBundle.contains(key)) {
                broken.add("bundle.go validateOwnedCRDs: owned CRD " + key + " not found in bundle");
            }
        }
        crds.stream()
                .map(crd -> crd.at("/metadata/name").asText())
                .filter(name -> !owned.contains(name))
                .forEach(name -> broken.add(
                        "bundle.go validateOwnedCRDs: CRD " + name + " is present in bundle but not defined in CSV"));
    }

    // validateRelatedImages, pkg/validation/internal/bundle.go at operator-framework/api v0.45.0; and every image the
    // install runs is among them, so that a disconnected mirror has it (OperatorHub's relatedImages guidance)
    private static void relatedImages(JsonNode csv, List<String> broken) {
        Set<String> related = new HashSet<>();
        Set<String> names = new HashSet<>();
        for (JsonNode image : csv.at("/spec/relatedImages")) {
            String reference = image.path("image").asText();
            if (!IMAGE_REFERENCE.matcher(reference).matches()) {
                broken.add("bundle.go validateRelatedImages: " + reference + " is not a valid image pullspec");
            }
            if (!names.add(image.path("name").asText())) {
                broken.add("relatedImages: the name " + image.path("name").asText() + " is used twice");
            }
            related.add(reference);
        }
        for (JsonNode deployment : csv.at("/spec/install/spec/deployments")) {
            for (JsonNode container : deployment.at("/spec/template/spec/containers")) {
                if (!related.contains(container.path("image").asText())) {
                    broken.add("relatedImages: the operator's image "
                            + container.path("image").asText() + " is missing");
                }
            }
        }
    }

    // the bundle's identity (metadata/annotations.yaml and the image's labels): registry+v1 with manifests/ and
    // metadata/, a package, and a default channel among its channels (the labels of pkg/lib/bundle/generate.go in
    // operator-framework/operator-registry, as vendored at operator-lifecycle-manager v0.46.0)
    private static void bundleMetadata(JsonNode metadata, String dockerfile, List<String> broken) {
        JsonNode annotations = metadata.path("annotations");
        Map<String, String> required = Map.of(
                BUNDLE_PREFIX + "mediatype.v1",
                "registry+v1",
                BUNDLE_PREFIX + "manifests.v1",
                "manifests/",
                BUNDLE_PREFIX + "metadata.v1",
                "metadata/");
        required.forEach((key, value) -> {
            if (!value.equals(annotations.path(key).asText())) {
                broken.add("bundle annotations: " + key + " is not " + value);
            }
        });
        if (annotations.path(BUNDLE_PREFIX + "package.v1").asText().isEmpty()) {
            broken.add("bundle annotations: no package");
        }
        List<String> channels =
                List.of(annotations.path(BUNDLE_PREFIX + "channels.v1").asText().split(","));
        if (!channels.contains(
                annotations.path(BUNDLE_PREFIX + "channel.default.v1").asText())) {
            broken.add("bundle annotations: the default channel is not among the channels");
        }
        annotations.properties().forEach(a -> {
            if (dockerfile == null
                    || !dockerfile.contains(
                            "LABEL " + a.getKey() + "=" + a.getValue().asText() + "\n")) {
                broken.add("bundle.Dockerfile: no LABEL " + a.getKey() + " as metadata/annotations.yaml has it");
            }
        });
    }

    // validateBundleSize, pkg/validation/internal/bundle.go at operator-framework/api v0.45.0
    private static void size(Map<String, String> files, List<String> broken) {
        ByteArrayOutputStream gzipped = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gzipped)) {
            for (String text : files.values()) {
                out.write(text.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        if (gzipped.size() > MAX_BUNDLE_GZIPPED) {
            broken.add("bundle.go validateBundleSize: " + gzipped.size() + " bytes gzipped, more than "
                    + MAX_BUNDLE_GZIPPED);
        }
    }

    private static boolean contains(JsonNode array, String value) {
        for (JsonNode element : array) {
            if (value.equals(element.asText())) {
                return true;
            }
        }
        return false;
    }

    private static boolean absoluteUrl(String url) {
        try {
            URI uri = new URI(url);
            return uri.isAbsolute() && uri.getHost() != null;
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static JsonNode read(ObjectMapper mapper, String text, String file, List<String> broken) {
        if (text == null) {
            broken.add(file + " is missing");
            return null;
        }
        try {
            return mapper.readTree(text);
        } catch (JsonProcessingException e) {
            broken.add(file + " cannot be parsed: " + e.getOriginalMessage());
            return null;
        }
    }
}
