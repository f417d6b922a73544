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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
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
    static final String CHANNEL = "alpha";
    static final String CSV_FILE = "manifests/" + PACKAGE + ".clusterserviceversion.yaml";
    static final String ANNOTATIONS_FILE = "metadata/annotations.yaml";
    static final String BUILD_COMMIT_ANNOTATION = "app.quarkus.io/commit-id";
    static final String DOCKERFILE = "bundle.Dockerfile";
    private static final String GENERATED = "# Written by `make bundle` from the build's manifests and the samples; edits are overwritten.\n";
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
    record Source(String file, String text) {
    }

    /** The manifests `package` writes (a JSON array of objects), the CRD it generates, and the samples. */
    record Inputs(Source manifests, Source crd, List<Source> samples) {
    }

    private OlmBundle() {
    }

    /**
     * Every file of the bundle, by its path under bundle/.
     *
     * @throws IllegalArgumentException naming the file, when an input cannot be read or lacks what the bundle needs
     */
    static SortedMap<String, String> render(Inputs inputs) {
        JsonNode crd = parse(YAML, inputs.crd());
        SortedMap<String, String> files = new TreeMap<>();
        files.put(CSV_FILE, GENERATED + yaml(clusterServiceVersion(inputs, crd)));
        files.put("manifests/" + text(crd, "/metadata/name", inputs.crd()) + ".crd.yaml", inputs.crd().text());
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
        String version = text(deployment, "/metadata/labels/app.kubernetes.io~1version", manifestsSource);
        String serviceAccount = text(deployment, "/spec/template/spec/serviceAccountName", manifestsSource);
        Grants grants = grants(manifests, serviceAccount);

        ObjectNode csv = NODES.objectNode();
        csv.put("apiVersion", "operators.coreos.com/v1alpha1");
        csv.put("kind", "ClusterServiceVersion");
        ObjectNode metadata = csv.putObject("metadata");
        metadata.put("name", PACKAGE + ".v" + version);
        ObjectNode annotations = metadata.putObject("annotations");
        annotations.put("alm-examples", almExamples(inputs.samples(), crd, inputs.crd()));
        annotations.put("capabilities", "Basic Install");
        annotations.put("categories", "AI/Machine Learning");
        annotations.put("containerImage", text(deployment, "/spec/template/spec/containers/0/image", manifestsSource));
        annotations.put("description", SHORT_DESCRIPTION);

        ObjectNode spec = csv.putObject("spec");
        spec.put("displayName", "Ebb");
        spec.put("description", DESCRIPTION);
        spec.put("version", version);
        spec.put("maturity", "alpha");
        spec.put("minKubeVersion", MIN_KUBE_VERSION);
        spec.putArray("keywords").add("llm").add("inference").add("vllm").add("sglang");
        spec.putObject("provider").put("name", "Ebb");
        // the Deployment watches every namespace and does not read OLM's target namespaces, so that is the one mode
        ArrayNode installModes = spec.putArray("installModes");
        for (String mode : List.of("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")) {
            installModes.addObject().put("type", mode).put("supported", mode.equals("AllNamespaces"));
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
        strategy.putArray("deployments").addObject()
                .put("name", text(deployment, "/metadata/name", manifestsSource))
                .set("spec", deploymentSpec);
        strategy.putArray("clusterPermissions").add(permission(serviceAccount, grants.cluster()));
        if (!grants.namespaced().isEmpty()) {
            strategy.putArray("permissions").add(permission(serviceAccount, grants.namespaced()));
        }
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

    /** The rules granted cluster-wide, and those granted in the operator's own namespace. */
    private record Grants(Set<JsonNode> cluster, Set<JsonNode> namespaced) {
    }

    /**
     * The rules of the roles the manifests define and bind to the operator's ServiceAccount. A binding to a role the
     * manifests do not define (Quarkus binds the built-in {@code view} in the operator's namespace) has no rules
     * to hand to OLM; the generated roles grant all the operator uses.
     */
    private static Grants grants(JsonNode manifests, String serviceAccount) {
        Map<String, JsonNode> roles = new HashMap<>();
        for (String kind : List.of("ClusterRole", "Role")) {
            ofKind(manifests, kind).forEach(role -> roles.put(kind + "/" + role.path("metadata").path("name").asText(), role));
        }
        Grants grants = new Grants(new LinkedHashSet<>(), new LinkedHashSet<>());
        for (JsonNode binding : elements(manifests)) {
            String kind = binding.path("kind").asText();
            if (!kind.equals("ClusterRoleBinding") && !kind.equals("RoleBinding") || !bindsTo(binding, serviceAccount)) {
                continue;
            }
            JsonNode roleRef = binding.path("roleRef");
            JsonNode role = roles.get(roleRef.path("kind").asText() + "/" + roleRef.path("name").asText());
            if (role != null) {
                Set<JsonNode> into = kind.equals("ClusterRoleBinding") ? grants.cluster() : grants.namespaced();
                elements(role.path("rules")).forEach(rule -> into.add(canonical(rule)));
            }
        }
        return grants;
    }

    private static boolean bindsTo(JsonNode binding, String serviceAccount) {
        return elements(binding.path("subjects")).stream().anyMatch(subject ->
                subject.path("kind").asText().equals("ServiceAccount") && subject.path("name").asText().equals(serviceAccount));
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
        JsonNode storage = elements(crd.at("/spec/versions")).stream().filter(v -> v.path("storage").asBoolean()).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(source.file() + " has no storage version under spec.versions"));
        return text(storage, "/name", source);
    }

    /** The samples as the JSON array OLM shows in its console, each checked to be a resource of the CRD. */
    private static String almExamples(List<Source> samples, JsonNode crd, Source crdSource) {
        String apiVersion = text(crd, "/spec/group", crdSource) + "/" + storageVersion(crd, crdSource);
        String kind = text(crd, "/spec/names/kind", crdSource);
        ArrayNode examples = NODES.arrayNode();
        for (Source sample : samples) {
            JsonNode example = parse(YAML, sample);
            if (!apiVersion.equals(example.path("apiVersion").asText()) || !kind.equals(example.path("kind").asText())) {
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
        BUNDLE_ANNOTATIONS.forEach((key, value) -> out.append("LABEL ").append(key).append('=').append(value).append('\n'));
        return out.append("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n").toString();
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
            throw new IllegalArgumentException(source.file() + " has no " + pointer.substring(1).replace('/', '.').replace("~1", "/"));
        }
        return value.asText();
    }

    private static List<JsonNode> ofKind(JsonNode manifests, String kind) {
        return elements(manifests).stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
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
