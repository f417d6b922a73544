package dev.ebb.operator.api.v1alpha1;

import java.util.Arrays;
import java.util.Optional;

/** What a role's replicas do: serve whole requests, or one half of a prefill/decode split. */
public enum RoleKind {
    Server,
    Prefill,
    Decode;

    public static Optional<RoleKind> fromWireName(String value) {
        return Arrays.stream(values()).filter(k -> k.name().equals(value)).findFirst();
    }
}
