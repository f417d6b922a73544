package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * The engine is kept as text on the wire so that a resource written for a newer or misspelled engine still
 * deserializes and can be refused with a message naming the field, instead of breaking the informer.
 */
@ValidationRule(
        value = "self.name == oldSelf.name",
        message = "spec.engine.name is immutable; create a new ModelDeployment to change engines",
        fieldPath = ".name")
public record EngineSpec(
        @Required @SchemaFrom(type = Engine.class) @JsonPropertyDescription("vLLM or SGLang. Immutable.")
        String name,

        @Size(max = 512) @JsonPropertyDescription("Engine image; the operator's default for the engine when empty.")
        String image) {}
