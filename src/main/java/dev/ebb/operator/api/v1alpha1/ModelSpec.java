package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

public record ModelSpec(
        @Required
        @Size(min = 1, max = 256)
        @JsonPropertyDescription("The served model name; also what the engine loads unless path is set.")
        String name,

        @Size(max = 1024) @JsonPropertyDescription("Load the weights from this path instead of by name.")
        String path) {}
