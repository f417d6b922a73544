package dev.ebb.operator.api.v1alpha1;

/**
 * The names engines, routers and role kinds go by in a ModelDeployment, as constants: the enums answer with them and
 * the CRD's admission rules are built from them, so the two cannot drift apart.
 */
public final class WireNames {
    public static final String VLLM = "vLLM";
    public static final String SGLANG = "SGLang";
    public static final String LLM_D_ROUTER = "llm-d-router";
    public static final String VLLM_ROUTER = "vllm-router";
    public static final String SGLANG_GATEWAY = "sglang-gateway";
    public static final String SERVER = "Server";
    public static final String PREFILL = "Prefill";
    public static final String DECODE = "Decode";

    private WireNames() {}
}
