package dev.ebb.operator.packaging;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.StreamSupport;

/**
 * The Operator Lifecycle Manager bundle (registry+v1) of the operator, made from what the build generates: the
 * manifests (RBAC and the Deployment), the CRD, and the samples. Pure and deterministic: the same inputs always give
 * byte-identical files, so a checked-in bundle can be compared with the one the current build would make.
 */
final class OlmBundle {
    static final String PACKAGE = "ebb-operator";
    /**
     * Channels named candidate*, stable* or fast* follow OLM's channel naming (validateHubChannels in
     * pkg/validation/internal/good_practices.go at operator-framework/api v0.45.0); a release before 1.0 is a candidate.
     */
    static final String CHANNEL = "candidate";

    static final String CSV_FILE = "manifests/" + PACKAGE + ".clusterserviceversion.yaml";
    static final String ANNOTATIONS_FILE = "metadata/annotations.yaml";
    static final String BUILD_COMMIT_ANNOTATION = "app.quarkus.io/commit-id";
    static final String DOCKERFILE = "bundle.Dockerfile";
    private static final String GENERATED =
            "# Written by `make bundle` from the build's manifests and the samples; edits are overwritten.\n";
    /** The bundle's identity, both as metadata/annotations.yaml and as the labels of its image. */
    private static final Map<String, String> BUNDLE_ANNOTATIONS = bundleAnnotations();
    /** The CRD's validation rules name the field they refuse (fieldPath, reason), which API servers read from 1.28. */
    private static final String MIN_KUBE_VERSION = "1.28.0";

    private static final String SHORT_DESCRIPTION =
            "Runs vLLM and SGLang inference engines and removes their replicas without cutting a generation.";
    private static final String DESCRIPTION = """
            Ebb runs large-language-model inference engines (vLLM, SGLang) as `ModelDeployment` resources: roles of \
            replicas, each of one or more Pods, optionally behind a router (llm-d's endpoint picker, vLLM's \
            production-stack router or SGLang's model gateway).

            A replica that leaves, by a scale-down, a rollout, a node drain or a plain `kubectl delete pod`, first \
            stops receiving requests, then finishes the ones it holds, and only then exits: every engine Pod gets a \
            drain hook that holds SIGTERM until the engine is idle, and a scale-down proves a replica idle before \
            deleting it.
            """;
    private static final String CRD_DESCRIPTION =
            "An inference engine's roles and replicas, removed only once they hold no request.";
    /** Where the operator is installed when the catalog's user does not choose (OperatorHub's suggested namespace). */
    static final String SUGGESTED_NAMESPACE = "ebb-system";

    static final String PROVIDER = "Ebb";
    static final String PROJECT_URL = "https://github.com/ebb-dev/ebb";
    static final String MAINTAINER = "Ebb maintainers";
    static final String MAINTAINER_EMAIL = "maintainers@ebb.dev";
    /**
     * When this release line was first bundled, for OperatorHub's listing (the createdAt annotation, RFC 3339): set
     * with each release and otherwise fixed, so that the bundle is the same on every build and every clone.
     */
    static final String CREATED_AT = "2026-11-30T00:00:00Z";
    /** The name the operator's own image takes among the related images. */
    static final String OPERATOR_IMAGE_NAME = "ebb-operator";
    /**
     * Resources the operator's rules may name, by scope: what is namespaced goes to the CSV's permissions, which OLM
     * grants by a Role in each target namespace (cluster-wide for AllNamespaces), and what is not to its
     * clusterPermissions (ensureRBACInTargetNamespace, ensureSingletonRBAC and ensureTenantRBAC in
     * pkg/controller/operators/olm/operatorgroup.go at operator-lifecycle-manager v0.46.0). A resource in neither list
     * fails the bundle rather than be granted in the wrong scope; the CRD's own resources are placed by its spec.scope.
     */
    private static final Set<String> NAMESPACED = Set.of(
            "/pods",
            "/services",
            "/events",
            "/serviceaccounts",
            "/configmaps",
            "discovery.k8s.io/endpointslices",
            "apps/deployments",
            "rbac.authorization.k8s.io/roles",
            "rbac.authorization.k8s.io/rolebindings",
            "policy/poddisruptionbudgets",
            "coordination.k8s.io/leases");

    private static final Set<String> CLUSTER_SCOPED = Set.of(
            "apiextensions.k8s.io/customresourcedefinitions",
            "/namespaces",
            "/nodes",
            "rbac.authorization.k8s.io/clusterroles",
            "rbac.authorization.k8s.io/clusterrolebindings");

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final ObjectMapper YAML = new YAMLMapper(YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .disable(YAMLGenerator.Feature.SPLIT_LINES)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
            .enable(YAMLGenerator.Feature.LITERAL_BLOCK_STYLE)
            .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
            .build());
    /** Two-space JSON with "\n" line ends on every platform, for the alm-examples annotation. */
    private static final DefaultPrettyPrinter PRETTY = new DefaultPrettyPrinter(
                    Separators.createDefaultInstance().withObjectFieldValueSpacing(Separators.Spacing.AFTER))
            .withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withArrayIndenter(new DefaultIndenter("  ", "\n"));

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** A file's name, for messages, and its text. */
    record Source(String file, String text) {}

    /**
     * The manifests `package` writes (a JSON array of objects), the CRD it generates, the samples, the icon (SVG), and
     * every image the operator uses by default, by the name of its setting.
     */
    record Inputs(
            Source manifests, Source crd, List<Source> samples, Source icon, SortedMap<String, String> defaultImages) {}

    private OlmBundle() {}

    /**
     * Every file of the bundle, by its path under bundle/.
     *
     * @throws IllegalArgumentException naming the file, when an input cannot be read or lacks what the bundle needs
     */
    static SortedMap<String, String> render(Inputs inputs) {
        JsonNode crd = parse(YAML, inputs.crd());
        SortedMap<String, String> files = new TreeMap<>();
        files.put(CSV_FILE, GENERATED + yaml(clusterServiceVersion(inputs, crd)));
        files.put(
                "manifests/" + text(crd, "/metadata/name", inputs.crd()) + ".crd.yaml",
                inputs.crd().text());
        ObjectNode annotations = NODES.objectNode();
        BUNDLE_ANNOTATIONS.forEach(annotations::put);
        files.put(ANNOTATIONS_FILE, GENERATED + yaml(NODES.objectNode().set("annotations", annotations)));
        files.put(DOCKERFILE, dockerfile());
        return files;
    }

    private static ObjectNode clusterServiceVersion(Inputs inputs, JsonNode crd) {
        Source manifestsSource = inputs.manifests();
        JsonNode manifests = parse(JSON, manifestsSource);
        if (!manifests.isArray()) {
            throw new IllegalArgumentException(manifestsSource.file() + " is not a JSON array of objects");
        }
        JsonNode deployment = onlyDeployment(manifests, manifestsSource);
        // the CSV's name must be a DNS-1123 subdomain (parseCSVNameFormat in pkg/validation/internal/csv.go at
        // operator-framework/api v0.45.0), so a pre-release such as 0.1.0-SNAPSHOT is written in lower case, here and
        // in spec.version alike so that the two agree; a release's version has no letters and stays as it is
        String version = text(deployment, "/metadata/labels/app.kubernetes.io~1version", manifestsSource)
                .toLowerCase(Locale.ROOT);
        String serviceAccount = text(deployment, "/spec/template/spec/serviceAccountName", manifestsSource);
        Grants grants = grants(manifests, serviceAccount, crd, inputs.crd());
        String operatorImage = text(deployment, "/spec/template/spec/containers/0/image", manifestsSource);

        ObjectNode csv = NODES.objectNode();
        csv.put("apiVersion", "operators.coreos.com/v1alpha1");
        csv.put("kind", "ClusterServiceVersion");
        ObjectNode metadata = csv.putObject("metadata");
        metadata.put("name", PACKAGE + ".v" + version);
        ObjectNode annotations = metadata.putObject("annotations");
        annotations.put("alm-examples", almExamples(inputs.samples(), crd, inputs.crd()));
        annotations.put("capabilities", "Basic Install");
        annotations.put("categories", "AI/Machine Learning");
        annotations.put("containerImage", operatorImage);
        annotations.put("createdAt", CREATED_AT);
        annotations.put("description", SHORT_DESCRIPTION);
        annotations.put("repository", PROJECT_URL);
        annotations.put("support", PROVIDER);
        annotations.put("operatorframework.io/suggested-namespace", SUGGESTED_NAMESPACE);
        // any earlier version found installed upgrades straight to this one when it heads the channel
        // (doc/design/how-to-update-operators.md, "skipRange", at operator-lifecycle-manager v0.46.0)
        annotations.put("olm.skipRange", "<" + version);

        ObjectNode spec = csv.putObject("spec");
        spec.put("displayName", "Ebb");
        spec.put("description", DESCRIPTION);
        spec.put("version", version);
        spec.put("maturity", "alpha");
        spec.put("minKubeVersion", MIN_KUBE_VERSION);
        spec.putArray("keywords").add("llm").add("inference").add("vllm").add("sglang");
        spec.putObject("provider").put("name", PROVIDER).put("url", PROJECT_URL);
        spec.putArray("maintainers").addObject().put("name", MAINTAINER).put("email", MAINTAINER_EMAIL);
        spec.putArray("links")
                .addObject()
                .put("name", "Source code and documentation")
                .put("url", PROJECT_URL);
        spec.putArray("icon")
                .addObject()
                .put("base64data", base64(inputs.icon()))
                .put("mediatype", "image/svg+xml");
        // The Deployment watches what OLM's olm.targetNamespaces annotation names (EBB_WATCH_NAMESPACES from the
        // downward API): one namespace, the operator's own or another, several, or all of them ("").
        ArrayNode installModes = spec.putArray("installModes");
        for (String mode : INSTALL_MODES) {
            installModes.addObject().put("type", mode).put("supported", true);
        }
        spec.putObject("customresourcedefinitions").putArray("owned").add(ownedCrd(crd, inputs.crd()));

        ObjectNode install = spec.putObject("install");
        install.put("strategy", "deployment");
        ObjectNode strategy = install.putObject("spec");
        JsonNode deploymentSpec = canonical(deployment.get("spec"));
        // the commit a build came from names a build, not the release the bundle is: every clone would make it stale
        JsonNode podAnnotations = deploymentSpec.at("/template/metadata/annotations");
        if (podAnnotations instanceof ObjectNode perBuild) {
            perBuild.remove(BUILD_COMMIT_ANNOTATION);
        }
        strategy.putArray("deployments")
                .addObject()
                .put("name", text(deployment, "/metadata/name", manifestsSource))
                .set("spec", deploymentSpec);
        if (!grants.cluster().isEmpty()) {
            strategy.putArray("clusterPermissions").add(permission(serviceAccount, grants.cluster()));
        }
        strategy.putArray("permissions").add(permission(serviceAccount, grants.namespaced()));
        spec.set("relatedImages", relatedImages(operatorImage, inputs.defaultImages()));
        return csv;
    }

    private static JsonNode onlyDeployment(JsonNode manifests, Source source) {
        List<JsonNode> deployments = ofKind(manifests, "Deployment");
        if (deployments.size() != 1) {
            throw new IllegalArgumentException(source.file() + " holds " + deployments.size()
                    + " Deployments; the bundle installs exactly one, the operator's");
        }
        return deployments.get(0);
    }

    /** The install modes, all supported: OLM's four (InstallModeType in pkg/operators/v1alpha1/clusterserviceversion_types.go at operator-framework/api v0.45.0). */
    static final List<String> INSTALL_MODES =
            List.of("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces");

    /** The rules on cluster-scoped resources, and those on namespaced ones. */
    private record Grants(Set<JsonNode> cluster, Set<JsonNode> namespaced) {}

    /**
     * The rules of the roles the manifests define and bind to the operator's ServiceAccount, sorted by the scope of
     * what they name rather than by how make deploy binds them: make deploy binds the namespaced rules cluster-wide
     * because it watches every namespace, while OLM grants permissions in the target namespaces only. A binding to a
     * role the manifests do not define has no rules to hand to OLM.
     */
    private static Grants grants(JsonNode manifests, String serviceAccount, JsonNode crd, Source crdSource) {
        Set<String> namespaced = new HashSet<>(NAMESPACED);
        if ("Namespaced".equals(crd.at("/spec/scope").asText())) {
            namespaced.add(text(crd, "/spec/group", crdSource) + "/" + text(crd, "/spec/names/plural", crdSource));
        }
        Map<String, JsonNode> roles = new HashMap<>();
        for (String kind : List.of("ClusterRole", "Role")) {
            ofKind(manifests, kind)
                    .forEach(role -> roles.put(
                            kind + "/" + role.path("metadata").path("name").asText(), role));
        }
        Grants grants = new Grants(new LinkedHashSet<>(), new LinkedHashSet<>());
        for (JsonNode binding : elements(manifests)) {
            String kind = binding.path("kind").asText();
            if (!kind.equals("ClusterRoleBinding") && !kind.equals("RoleBinding")
                    || !bindsTo(binding, serviceAccount)) {
                continue;
            }
            JsonNode roleRef = binding.path("roleRef");
            JsonNode role = roles.get(
                    roleRef.path("kind").asText() + "/" + roleRef.path("name").asText());
            if (role != null) {
                elements(role.path("rules"))
                        .forEach(rule -> (namespaced(rule, namespaced) ? grants.namespaced() : grants.cluster())
                                .add(canonical(rule)));
            }
        }
        return grants;
    }

    /** Whether every resource the rule names is namespaced; false when every one is cluster-scoped. */
    private static boolean namespaced(JsonNode rule, Set<String> namespaced) {
        Set<Boolean> scopes = new HashSet<>();
        for (JsonNode group : elements(rule.path("apiGroups"))) {
            for (JsonNode resource : elements(rule.path("resources"))) {
                String key = group.asText() + "/" + resource.asText().split("/", 2)[0];
                if (namespaced.contains(key)) {
                    scopes.add(true);
                } else if (CLUSTER_SCOPED.contains(key)) {
                    scopes.add(false);
                } else {
                    throw new IllegalArgumentException("the rule " + rule + " names " + key
                            + ", whose scope the bundle does not know; add it to OlmBundle's lists");
                }
            }
        }
        if (scopes.size() != 1) {
            throw new IllegalArgumentException(
                    "the rule " + rule + " mixes namespaced and cluster-scoped resources (or names none)");
        }
        return scopes.contains(true);
    }

    /**
     * The operator's image and every image it runs by default, so that a disconnected mirror copies them all
     * (spec.relatedImages). Sorted by name, the operator's first.
     */
    private static ArrayNode relatedImages(String operatorImage, SortedMap<String, String> defaultImages) {
        ArrayNode images = NODES.arrayNode();
        images.addObject().put("name", OPERATOR_IMAGE_NAME).put("image", operatorImage);
        defaultImages.forEach(
                (name, image) -> images.addObject().put("name", name).put("image", image));
        return images;
    }

    private static String base64(Source icon) {
        if (icon.text().isBlank()) {
            throw new IllegalArgumentException(icon.file() + " is empty");
        }
        return Base64.getEncoder().encodeToString(icon.text().getBytes(StandardCharsets.UTF_8));
    }

    private static boolean bindsTo(JsonNode binding, String serviceAccount) {
        return elements(binding.path("subjects")).stream()
                .anyMatch(subject -> subject.path("kind").asText().equals("ServiceAccount")
                        && subject.path("name").asText().equals(serviceAccount));
    }

    private static ObjectNode permission(String serviceAccount, Set<JsonNode> rules) {
        ObjectNode permission = NODES.objectNode().put("serviceAccountName", serviceAccount);
        permission.putArray("rules").addAll(rules);
        return permission;
    }

    private static ObjectNode ownedCrd(JsonNode crd, Source source) {
        return NODES.objectNode()
                .put("name", text(crd, "/metadata/name", source))
                .put("version", storageVersion(crd, source))
                .put("kind", text(crd, "/spec/names/kind", source))
                .put("displayName", "Model Deployment")
                .put("description", CRD_DESCRIPTION);
    }

    private static String storageVersion(JsonNode crd, Source source) {
        JsonNode storage = elements(crd.at("/spec/versions")).stream()
                .filter(v -> v.path("storage").asBoolean())
                .findFirst()
                .orElseThrow(() ->
                        new IllegalArgumentException(source.file() + " has no storage version under spec.versions"));
        return text(storage, "/name", source);
    }

    /** The samples as the JSON array OLM shows in its console, each checked to be a resource of the CRD. */
    private static String almExamples(List<Source> samples, JsonNode crd, Source crdSource) {
        String apiVersion = text(crd, "/spec/group", crdSource) + "/" + storageVersion(crd, crdSource);
        String kind = text(crd, "/spec/names/kind", crdSource);
        ArrayNode examples = NODES.arrayNode();
        for (Source sample : samples) {
            JsonNode example = parse(YAML, sample);
            if (!apiVersion.equals(example.path("apiVersion").asText())
                    || !kind.equals(example.path("kind").asText())) {
                throw new IllegalArgumentException(sample.file() + " is not a " + kind + " of " + apiVersion);
            }
            examples.add(example);
        }
        try {
            return JSON.writer(PRETTY).writeValueAsString(examples);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the samples as JSON", e);
        }
    }

    private static String dockerfile() {
        StringBuilder out = new StringBuilder(GENERATED).append("FROM scratch\n\n");
        BUNDLE_ANNOTATIONS.forEach((key, value) ->
                out.append("LABEL ").append(key).append('=').append(value).append('\n'));
        return out.append("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n")
                .toString();
    }

    private static Map<String, String> bundleAnnotations() {
        String prefix = "operators.operatorframework.io.bundle.";
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(prefix + "mediatype.v1", "registry+v1");
        annotations.put(prefix + "manifests.v1", "manifests/");
        annotations.put(prefix + "metadata.v1", "metadata/");
        annotations.put(prefix + "package.v1", PACKAGE);
        annotations.put(prefix + "channels.v1", CHANNEL);
        annotations.put(prefix + "channel.default.v1", CHANNEL);
        return annotations;
    }

    private static JsonNode parse(ObjectMapper mapper, Source source) {
        try {
            JsonNode node = mapper.readTree(source.text());
            if (node == null || node.isMissingNode()) {
                throw new IllegalArgumentException(source.file() + " is empty");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(source.file() + " cannot be parsed: " + e.getOriginalMessage(), e);
        }
    }

    private static String text(JsonNode node, String pointer, Source source) {
        JsonNode value = node.at(pointer);
        if (!value.isTextual() || value.asText().isEmpty()) {
            throw new IllegalArgumentException(source.file() + " has no "
                    + pointer.substring(1).replace('/', '.').replace("~1", "/"));
        }
        return value.asText();
    }

    private static List<JsonNode> ofKind(JsonNode manifests, String kind) {
        return elements(manifests).stream()
                .filter(o -> o.path("kind").asText().equals(kind))
                .toList();
    }

    private static List<JsonNode> elements(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false).toList();
    }

    /** The same object with every map's keys in order, so that no generator's map order reaches the bundle. */
    private static JsonNode canonical(JsonNode node) {
        if (node.isObject()) {
            Map<String, JsonNode> sorted = new TreeMap<>();
            node.properties().forEach(field -> sorted.put(field.getKey(), canonical(field.getValue())));
            return NODES.objectNode().setAll(sorted);
        }
        if (node.isArray()) {
            ArrayNode array = NODES.arrayNode();
            node.forEach(element -> array.add(canonical(element)));
            return array;
        }
        return node;
    }

    private static String yaml(JsonNode node) {
        try {
            return YAML.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write YAML", e);
        }
    }
}
