package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Optional;

/** The routers Ebb can put in front of a ModelDeployment, and the engines each one serves. */
public enum RouterKind {
    LLM_D_ROUTER(WireNames.LLM_D_ROUTER, Engine.VLLM, Engine.SGLANG),
    VLLM_ROUTER(WireNames.VLLM_ROUTER, Engine.VLLM),
    SGLANG_GATEWAY(WireNames.SGLANG_GATEWAY, Engine.SGLANG);

    private final String wireName;
    private final Engine[] servedEngines;

    RouterKind(String wireName, Engine... servedEngines) {
        this.wireName = wireName;
        this.servedEngines = servedEngines;
    }

    @JsonValue
    public String wireName() {
        return wireName;
    }

    public boolean serves(Engine engine) {
        return Arrays.asList(servedEngines).contains(engine);
    }

    public static Optional<RouterKind> fromWireName(String value) {
        return Arrays.stream(values()).filter(r -> r.wireName.equals(value)).findFirst();
    }
}
