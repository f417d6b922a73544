package dev.ebb.operator.packaging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;

/**
 * `make reference`: the ModelDeployment field reference under docs/reference/, written from the CRD in the OLM bundle
 * (which PackagedBundleIT keeps equal to the one the build generates). Every field the CRD describes, with its type,
 * its default, its limits and the rules the API server enforces at admission, with their messages. Fields the CRD
 * takes whole from Kubernetes' own types (a Pod's env, resources, affinity, volumes) are listed once, not expanded.
 */
public final class CrdReference {
    static final Path CRD = Path.of("bundle", "manifests", "modeldeployments.serving.ebb.dev.crd.yaml");
    static final Path REFERENCE = Path.of("docs", "reference", "modeldeployment.md");
    /** The default as the descriptions state it: "...; 240 when unset." or "Protocol (default): ...". */
    private static final Pattern WHEN_UNSET = Pattern.compile("(?:^|[;.] )([\\w./-]+) when unset");

    private static final Pattern MARKED_DEFAULT = Pattern.compile("(?:^|[,:;] |\\. )([\\w./-]+) \\(default\\)");

    private CrdReference() {}

    public static void main(String[] args) throws IOException {
        Files.createDirectories(REFERENCE.getParent());
        Files.writeString(REFERENCE, render(Files.readString(CRD)));
        System.out.println("wrote " + REFERENCE);
    }

    /** The reference, from the CRD's YAML. */
    static String render(String crdYaml) throws IOException {
        JsonNode crd = new YAMLMapper().readTree(crdYaml);
        JsonNode version = crd.path("spec").path("versions").path(0);
        JsonNode schema = version.path("schema").path("openAPIV3Schema");
        StringBuilder out = new StringBuilder();
        out.append("# ModelDeployment reference\n\n");
        out.append(String.format(
                "`%s/%s`, kind `%s`, short name `%s`. Written by `make reference` from the CRD; a test fails when it is"
                        + " stale.%n%n",
                crd.path("spec").path("group").asText(),
                version.path("name").asText(),
                crd.path("spec").path("names").path("kind").asText(),
                crd.path("spec").path("names").path("shortNames").path(0).asText()));
        out.append(
                "A default is what the operator takes when the field is unset; limits are enforced at admission, as are"
                        + " the rules listed after each table, whose message is what `kubectl apply` prints.\n");
        for (String part : List.of("spec", "status")) {
            List<Row> rows = new ArrayList<>();
            List<Rule> rules = new ArrayList<>();
            walk(schema.path("properties").path(part), part, rows, rules);
            out.append("\n## ").append(part).append("\n\n");
            out.append("| field | type | default | limits | what it is |\n|---|---|---|---|---|\n");
            for (Row row : rows) {
                out.append(String.format(
                        "| `%s` | %s | %s | %s | %s |%n",
                        row.path(), row.type(), cell(row.defaultValue()), cell(row.limits()), cell(row.description())));
            }
            if (!rules.isEmpty()) {
                out.append("\nRules checked at admission:\n\n");
                for (Rule rule : rules) {
                    out.append(String.format("- on `%s`: %s%n", rule.path(), rule.message()));
                }
            }
        }
        return out.toString();
    }

    private record Row(String path, String type, String defaultValue, String limits, String description) {}

    private record Rule(String path, String message) {}

    private static void walk(JsonNode node, String path, List<Row> rows, List<Rule> rules) {
        for (JsonNode validation : iterable(node.path("x-kubernetes-validations"))) {
            String field = validation.path("fieldPath").asText("");
            rules.add(new Rule(path + field, validation.path("message").asText()));
        }
        JsonNode items = node.path("items");
        JsonNode fields = "array".equals(node.path("type").asText()) ? items : node;
        String prefix = fields == items ? path + "[]" : path;
        if (fields != node) {
            for (JsonNode validation : iterable(items.path("x-kubernetes-validations"))) {
                rules.add(new Rule(
                        prefix + validation.path("fieldPath").asText(""),
                        validation.path("message").asText()));
            }
        }
        if (!describesItsFields(fields)) {
            return;
        }
        Iterator<Map.Entry<String, JsonNode>> properties =
                fields.path("properties").fields();
        while (properties.hasNext()) {
            Map.Entry<String, JsonNode> property = properties.next();
            String childPath = prefix + "." + property.getKey();
            JsonNode child = property.getValue();
            String description = child.path("description").asText("");
            boolean required = StreamSupport.stream(fields.path("required").spliterator(), false)
                    .anyMatch(r -> r.asText().equals(property.getKey()));
            rows.add(new Row(
                    childPath,
                    type(child) + (required ? ", required" : ""),
                    defaultOf(description).orElse(""),
                    limits(child),
                    description.isEmpty() && !describesItsFields(elementOf(child))
                            ? "as in Kubernetes' own type of that name"
                            : description));
            walk(child, childPath, rows, rules);
        }
    }

    /** Ebb's own objects describe their fields; Kubernetes' types the CRD embeds (EnvVar, Affinity, Volume) do not. */
    private static boolean describesItsFields(JsonNode node) {
        return StreamSupport.stream(iterable(node.path("properties")).spliterator(), false)
                .anyMatch(child -> child.has("description") || describesItsFields(elementOf(child)));
    }

    private static JsonNode elementOf(JsonNode node) {
        return "array".equals(node.path("type").asText()) ? node.path("items") : node;
    }

    private static String type(JsonNode node) {
        String type = node.path("type").asText("any");
        if (node.path("x-kubernetes-int-or-string").asBoolean()) {
            return "integer or string";
        }
        if ("array".equals(type)) {
            return "list of " + type(node.path("items"));
        }
        if ("object".equals(type) && node.has("additionalProperties")) {
            return "map of " + type(node.path("additionalProperties"));
        }
        return type;
    }

    private static String limits(JsonNode node) {
        List<String> limits = new ArrayList<>();
        if (node.has("enum")) {
            List<String> values = new ArrayList<>();
            node.path("enum").forEach(v -> values.add("`" + v.asText() + "`"));
            limits.add("one of " + String.join(", ", values));
        }
        range(limits, node, "minimum", "maximum", "");
        range(limits, node, "minLength", "maxLength", " characters");
        range(limits, node, "minItems", "maxItems", " items");
        range(limits, node, "minProperties", "maxProperties", " entries");
        if (node.has("pattern")) {
            limits.add("matches `" + node.path("pattern").asText() + "`");
        }
        return String.join("; ", limits);
    }

    private static void range(List<String> limits, JsonNode node, String min, String max, String unit) {
        if (node.has(min) && node.has(max)) {
            limits.add(number(node.path(min)) + ".." + number(node.path(max)) + unit);
        } else if (node.has(min)) {
            limits.add("at least " + number(node.path(min)) + unit);
        } else if (node.has(max)) {
            limits.add("at most " + number(node.path(max)) + unit);
        }
    }

    /** The CRD generator writes integer bounds as 0.0; a person reads 0. */
    private static String number(JsonNode value) {
        double d = value.asDouble();
        return d == Math.rint(d) ? Long.toString((long) d) : value.asText();
    }

    static Optional<String> defaultOf(String description) {
        for (Pattern pattern : List.of(WHEN_UNSET, MARKED_DEFAULT)) {
            Matcher m = pattern.matcher(description);
            if (m.find()) {
                return Optional.of("`" + m.group(1) + "`");
            }
        }
        return Optional.empty();
    }

    /** A table cell: pipes escaped, line breaks flattened, a dash when empty. */
    private static String cell(String text) {
        return text.isEmpty() ? "–" : text.replace("|", "\\|").replace("\n", " ");
    }

    private static Iterable<JsonNode> iterable(JsonNode node) {
        return node::elements;
    }
}
