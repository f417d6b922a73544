package dev.ebb.operator.retire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;

/** Entries of status.retirements[] as someone editing the status would leave them, one field at a time. */
final class EditedStatus {
    private static final ObjectMapper JSON = new ObjectMapper();

    private EditedStatus() {}

    /** The entry with {@code field} set to {@code value}, as its JSON would then read. */
    static RetirementStatus edited(RetirementStatus entry, String field, Object value) {
        ObjectNode node = JSON.valueToTree(entry);
        node.set(field, JSON.valueToTree(value));
        try {
            return JSON.treeToValue(node, RetirementStatus.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("no RetirementStatus with " + field + " = " + value, e);
        }
    }
}
