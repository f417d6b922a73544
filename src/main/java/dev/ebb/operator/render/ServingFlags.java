package dev.ebb.operator.render;

import java.util.List;

/**
 * The flags both engines spell the same way: the served model name and where the API listens. Documented for vLLM at
 * https://docs.vllm.ai/en/latest/cli/serve.html and for SGLang at
 * https://docs.sglang.ai/advanced_features/server_arguments.html.
 */
final class ServingFlags {
    /** Listen on every interface: the kubelet's probe, the Service and the drain read all reach the Pod's IP or loopback. */
    static final String ALL_INTERFACES = "0.0.0.0";

    private ServingFlags() {}

    static List<String> of(MemberSlot slot) {
        return List.of(
                "--served-model-name",
                slot.deployment().modelName(),
                "--host",
                ALL_INTERFACES,
                "--port",
                Integer.toString(RoutingProxy.enginePort(slot)));
    }
}
