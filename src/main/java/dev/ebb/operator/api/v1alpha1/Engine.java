package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Optional;

/** The inference engines Ebb knows how to launch and drain. */
public enum Engine {
    VLLM(WireNames.VLLM),
    SGLANG(WireNames.SGLANG);

    private final String wireName;

    Engine(String wireName) {
        this.wireName = wireName;
    }

    @JsonValue
    public String wireName() {
        return wireName;
    }

    public static Optional<Engine> fromWireName(String value) {
        return Arrays.stream(values()).filter(e -> e.wireName.equals(value)).findFirst();
    }
}
