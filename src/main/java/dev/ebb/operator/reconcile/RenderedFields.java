package dev.ebb.operator.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * Whether an object as the API server keeps it still holds everything the operator rendered for it: every field the
 * rendering sets has the same value; what the server or a controller added (defaults, a cluster IP, a revision
 * annotation, status) is not compared. Lists are compared element by element at the same length, each element by the
 * same rule, so a container the server filled in with its defaults still holds its rendering. JOSDK's matcher for
 * dependent resources (5.3.2) diffs whole lists instead, and read a router Deployment kube-apiserver v1.37.2 had
 * defaulted as changed on every pass, writing it again each time. Pure.
 */
final class RenderedFields {
    private RenderedFields() {}

    static boolean heldBy(JsonNode rendered, JsonNode actual) {
        if (rendered == null || rendered.isNull()) {
            return true;
        }
        if (actual == null || actual.isNull()) {
            return false;
        }
        if (rendered.isObject()) {
            if (!actual.isObject()) {
                return false;
            }
            for (Iterator<Map.Entry<String, JsonNode>> fields = rendered.fields(); fields.hasNext(); ) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (!heldBy(field.getValue(), actual.get(field.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        if (rendered.isArray()) {
            if (!actual.isArray() || actual.size() != rendered.size()) {
                return false;
            }
            for (int i = 0; i < rendered.size(); i++) {
                if (!heldBy(rendered.get(i), actual.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (rendered.isNumber() && actual.isNumber()) {
            return rendered.decimalValue().compareTo(actual.decimalValue()) == 0;
        }
        return rendered.equals(actual);
    }
}
