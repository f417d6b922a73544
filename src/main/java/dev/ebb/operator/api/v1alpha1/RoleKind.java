package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Optional;

/** What a role's replicas do: serve whole requests, or one half of a prefill/decode split. */
public enum RoleKind {
    Server(WireNames.SERVER),
    Prefill(WireNames.PREFILL),
    Decode(WireNames.DECODE);

    private final String wireName;

    RoleKind(String wireName) {
        this.wireName = wireName;
    }

    @JsonValue
    public String wireName() {
        return wireName;
    }

    public static Optional<RoleKind> fromWireName(String value) {
        return Arrays.stream(values()).filter(k -> k.wireName.equals(value)).findFirst();
    }
}
