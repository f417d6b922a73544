package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.List;

public record RouterSpec(
        @Required @SchemaFrom(type = RouterKind.class)
        @JsonPropertyDescription("llm-d-router (either engine), vllm-router (vLLM) or sglang-gateway (SGLang).")
        String name,
        @Min(0) @Max(RouterSpec.MAX_REPLICAS)
        @JsonPropertyDescription("Router replicas; 1 when unset.")
        Integer replicas,
        @Size(max = 512)
        String image,
        @Size(max = 256)
        List<String> extraArgs) {
    public static final int MAX_REPLICAS = 64;
}
