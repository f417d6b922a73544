package dev.ebb.operator.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.SimpleType;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Admission as an API server does it for a CRD: the object must fit the version's OpenAPI schema and pass every
 * {@code x-kubernetes-validations} rule, and a refusal reads the way {@code kubectl} would print it.
 */
public final class CrdAdmission {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final JsonNode schemaTree;
    private final Schema schema;
    private final String resource;
    private final Cel cel = CelFactory.standardCelBuilder()
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addVar("self", SimpleType.DYN)
            .addVar("oldSelf", SimpleType.DYN)
            .build();
    private final Map<String, CelAbstractSyntaxTree> compiled = new HashMap<>();
    /** The schema keywords whose failure keeps the CEL rules from running (NotSupported, Required, TooLong, TooMany, TypeInvalid). */
    private static final Set<String> BLOCKING_KEYWORDS = Set.of("enum", "required", "maxLength", "maxItems", "type");

    static final String RULES_NOT_CHECKED =
            "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
                    + "correct the existing errors to complete validation";

    public CrdAdmission(CustomResourceDefinition crd) {
        this.schemaTree =
                JSON.valueToTree(crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema());
        this.schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_4)
                .getSchema(schemaTree.toString(), InputFormat.JSON);
        this.resource = crd.getSpec().getNames().getKind() + "." + crd.getSpec().getGroup();
    }

    /**
     * Every reason to refuse the object, each starting with the path of the field; empty when it is admitted. As
     * kube-apiserver v1.37.2 does (apiextensions-apiserver, pkg/registry/customresource/strategy.go, hasBlockingErr):
     * an unsupported, required, too long, too many or mistyped value stops the CEL rules from running and says so;
     * any other schema error (a bound, a pattern, too few items) lets them run beside it.
     */
    public List<String> violations(JsonNode given, JsonNode old) {
        JsonNode object = withoutNulls(given);
        List<String> out = new ArrayList<>();
        boolean blocking = false;
        for (Error error : schema.validate(object.toString(), InputFormat.JSON)) {
            out.add(describe(error));
            blocking |= BLOCKING_KEYWORDS.contains(error.getKeyword());
        }
        if (blocking) {
            out.add(RULES_NOT_CHECKED);
        } else {
            checkRules(schemaTree, object, old, "", out);
        }
        return out;
    }

    /** The refusal as the API server words it. */
    public String refusal(String name, List<String> violations) {
        String causes = violations.size() == 1 ? violations.get(0) : "[" + String.join(", ", violations) + "]";
        return resource + " \"" + name + "\" is invalid: " + causes;
    }

    private static String describe(Error error) {
        String path = path(error.getInstanceLocation().toString());
        JsonNode value = error.getInstanceNode();
        JsonNode rule = error.getSchemaNode();
        return switch (error.getKeyword()) {
            case "required" -> join(path, error.getProperty()) + ": Required value";
            case "minimum" ->
                path + ": Invalid value: " + value + ": " + path + " in body should be greater than or equal to "
                        + number(rule);
            case "maximum" ->
                path + ": Invalid value: " + value + ": " + path + " in body should be less than or equal to "
                        + number(rule);
            case "enum" ->
                path + ": Unsupported value: " + value + ": supported values: "
                        + stream(rule).map(JsonNode::toString).collect(Collectors.joining(", "));
            case "pattern" ->
                path + ": Invalid value: " + value + ": " + path + " in body should match '" + rule.asText() + "'";
            case "maxLength" -> path + ": Too long: may not be more than " + rule.asInt() + " bytes";
            case "minLength" ->
                path + ": Invalid value: " + value + ": " + path + " in body should be at least " + rule.asInt()
                        + " chars long";
            case "minItems" ->
                path + ": Invalid value: " + value.size() + ": " + path + " in body should have at least "
                        + rule.asInt() + " items";
            case "maxItems" -> path + ": Too many: " + value.size() + ": must have at most " + rule.asInt() + " items";
            case "type" ->
                path + ": Invalid value: \"" + value.getNodeType().name().toLowerCase() + "\": " + path
                        + " in body must be of type " + rule.asText();
            default -> path + ": Invalid value: " + error.getMessage();
        };
    }

    /** Walks the schema beside the object and evaluates each rule on the value it is attached to. */
    private void checkRules(JsonNode schemaNode, JsonNode value, JsonNode old, String path, List<String> out) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return;
        }
        JsonNode rules = schemaNode.get("x-kubernetes-validations");
        if (rules != null) {
            for (JsonNode rule : rules) {
                evaluate(schemaNode, rule, value, old, path, out);
            }
        }
        JsonNode properties = schemaNode.get("properties");
        if (properties != null && value.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = properties.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> property = it.next();
                checkRules(
                        property.getValue(),
                        value.get(property.getKey()),
                        old == null ? null : old.get(property.getKey()),
                        join(path, property.getKey()),
                        out);
            }
        }
        JsonNode items = schemaNode.get("items");
        if (items != null && value.isArray()) {
            for (int i = 0; i < value.size(); i++) {
                checkRules(items, value.get(i), null, path + "[" + i + "]", out);
            }
        }
    }

    /**
     * A failed rule reads "path: Invalid value: detail" where it is declared on an object or an array, whose value the
     * server leaves out, and "path: Invalid value: value: detail" on a scalar (apiextensions-apiserver v0.37.2,
     * pkg/apiserver/schema/cel/validation.go: field.OmitValueType for "object" and "array").
     */
    private void evaluate(
            JsonNode schemaNode, JsonNode rule, JsonNode value, JsonNode old, String path, List<String> out) {
        String expression = rule.get("rule").asText();
        boolean transition = expression.contains("oldSelf");
        if (transition && (old == null || old.isNull())) {
            return;
        }
        Map<String, Object> variables = new HashMap<>();
        variables.put("self", toCel(value));
        if (transition) {
            variables.put("oldSelf", toCel(old));
        }
        String field = rule.hasNonNull("fieldPath")
                ? join(path, rule.get("fieldPath").asText().substring(1))
                : path;
        String message = rule.hasNonNull("message") ? rule.get("message").asText() : "failed rule: " + expression;
        String type = schemaNode.path("type").asText();
        String invalid =
                field + ": Invalid value: " + (type.equals("object") || type.equals("array") ? "" : value + ": ");
        try {
            Object result = cel.createProgram(ast(expression)).eval(variables);
            if (!Boolean.TRUE.equals(result)) {
                out.add(invalid + message);
            }
        } catch (CelEvaluationException e) {
            out.add(invalid + e.getMessage() + " evaluating rule: " + expression);
        }
    }

    private CelAbstractSyntaxTree ast(String expression) {
        return compiled.computeIfAbsent(expression, e -> {
            try {
                return cel.compile(e).getAst();
            } catch (CelValidationException ex) {
                throw new IllegalArgumentException("the CRD carries a rule that does not compile: " + e, ex);
            }
        });
    }

    /** The API server drops null values of fields that are not nullable before it validates. */
    static JsonNode withoutNulls(JsonNode node) {
        JsonNode copy = node.deepCopy();
        strip(copy);
        return copy;
    }

    private static void strip(JsonNode node) {
        if (node.isObject()) {
            List<String> nulls = new ArrayList<>();
            node.fields().forEachRemaining(e -> {
                if (e.getValue().isNull()) {
                    nulls.add(e.getKey());
                } else {
                    strip(e.getValue());
                }
            });
            ((ObjectNode) node).remove(nulls);
        } else if (node.isArray()) {
            node.forEach(CrdAdmission::strip);
        }
    }

    /** JSON as CEL sees it: objects are maps, numbers without a fraction are ints (Java long). */
    static Object toCel(JsonNode node) {
        if (node.isObject()) {
            Map<String, Object> map = new LinkedHashMap<>();
            node.fields().forEachRemaining(e -> {
                if (!e.getValue().isNull()) {
                    map.put(e.getKey(), toCel(e.getValue()));
                }
            });
            return map;
        }
        if (node.isArray()) {
            List<Object> list = new ArrayList<>();
            node.forEach(n -> list.add(toCel(n)));
            return list;
        }
        if (node.isIntegralNumber()) {
            return node.asLong();
        }
        if (node.isNumber()) {
            return node.asDouble();
        }
        if (node.isBoolean()) {
            return node.asBoolean();
        }
        return node.asText();
    }

    private static java.util.stream.Stream<JsonNode> stream(JsonNode array) {
        List<JsonNode> nodes = new ArrayList<>();
        array.forEach(nodes::add);
        return nodes.stream();
    }

    private static String number(JsonNode rule) {
        return rule.asDouble() == Math.rint(rule.asDouble()) ? Long.toString(rule.asLong()) : rule.asText();
    }

    /** "/spec/roles/0/size" as the API server writes it: "spec.roles[0].size". */
    private static String path(String pointer) {
        StringBuilder out = new StringBuilder();
        for (String segment : pointer.split("/")) {
            if (segment.isEmpty() || segment.equals("$")) {
                continue;
            }
            if (segment.chars().allMatch(Character::isDigit)) {
                out.append('[').append(segment).append(']');
            } else {
                out.append(out.length() == 0 ? "" : ".")
                        .append(segment.replace("~1", "/").replace("~0", "~"));
            }
        }
        return out.toString();
    }

    private static String join(String path, String child) {
        return path.isEmpty() ? child : path + "." + child;
    }
}
