package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.List;

public record RouterSpec(
        @Required
        @SchemaFrom(type = RouterKind.class)
        @JsonPropertyDescription("llm-d-router (either engine), vllm-router (vLLM) or sglang-gateway (SGLang).")
        String name,

        @Min(0) @Max(RouterSpec.MAX_REPLICAS) @JsonPropertyDescription("Router replicas; 1 when unset.")
        Integer replicas,

        @Size(max = 512) String image,
        @Size(max = 256) List<String> extraArgs,

        @Min(RetirementSpec.MIN_DRAIN_SECONDS)
        @Max(RetirementSpec.MAX_DRAIN_SECONDS)
        @JsonPropertyDescription(
                "How long a leaving router Pod may carry its streams to their end, 30..86400; when unset, the"
                        + " longest retirement.drainSeconds of the roles, as a stream through the router is a generation of one of them.")
        Integer drainSeconds) {
    public static final int MAX_REPLICAS = 64;
}
