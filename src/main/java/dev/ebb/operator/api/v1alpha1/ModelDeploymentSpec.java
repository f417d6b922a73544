package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

@ValidationRule(
        value = "!has(self.router) || self.router.name == 'llm-d-router'"
                + " || (self.router.name == 'vllm-router' && self.engine.name == 'vLLM')"
                + " || (self.router.name == 'sglang-gateway' && self.engine.name == 'SGLang')",
        message = "spec.router.name does not fit spec.engine.name: vllm-router serves only vLLM, sglang-gateway only SGLang, llm-d-router either",
        fieldPath = ".router.name")
@ValidationRule(
        value = "self.roles.all(r, self.roles.exists_one(o, o.name == r.name))",
        message = "spec.roles[].name must be unique",
        fieldPath = ".roles")
public record ModelDeploymentSpec(
        @Required ModelSpec model,
        @Required EngineSpec engine,
        @JsonPropertyDescription("Optional router in front of the roles; without it clients reach roles through their Services.")
        RouterSpec router,
        @Required @Size(min = 1, max = ModelDeploymentSpec.MAX_ROLES)
        List<RoleSpec> roles) {
    public static final int MAX_ROLES = 10;
}
