package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

@ValidationRule(
        value = "!has(self.router) || self.router.name == '" + WireNames.LLM_D_ROUTER + "'"
                + " || (self.router.name == '" + WireNames.VLLM_ROUTER + "' && self.engine.name == '" + WireNames.VLLM
                + "')"
                + " || (self.router.name == '" + WireNames.SGLANG_GATEWAY + "' && self.engine.name == '"
                + WireNames.SGLANG + "')",
        message =
                "spec.router.name does not fit spec.engine.name: vllm-router serves only vLLM, sglang-gateway only SGLang, llm-d-router either",
        fieldPath = ".router.name")
// vLLM's router and SGLang's gateway each reach every engine on one port, and serve either whole requests or a
// prefill/decode split with both halves; a role without a port serves on the default port
@ValidationRule(
        value = "!has(self.router) || !(self.router.name in ['" + WireNames.VLLM_ROUTER + "', '"
                + WireNames.SGLANG_GATEWAY + "']) || size(self.roles) == 0"
                + " || self.roles.all(r, (has(r.port) ? r.port : " + RoleSpec.DEFAULT_PORT
                + ") == (has(self.roles[0].port) ? self.roles[0].port : " + RoleSpec.DEFAULT_PORT + "))",
        message =
                "spec.roles[].port must be the same for every role behind vllm-router or sglang-gateway: each reaches all of them on one port",
        fieldPath = ".roles")
@ValidationRule(
        value = "!has(self.router) || !(self.router.name in ['" + WireNames.VLLM_ROUTER + "', '"
                + WireNames.SGLANG_GATEWAY + "'])"
                + " || self.roles.all(r, !has(r.kind) || r.kind == '" + WireNames.SERVER + "')"
                + " || (self.roles.all(r, has(r.kind) && r.kind != '" + WireNames.SERVER + "')"
                + " && self.roles.exists(r, has(r.kind) && r.kind == '" + WireNames.PREFILL + "')"
                + " && self.roles.exists(r, has(r.kind) && r.kind == '" + WireNames.DECODE + "'))",
        message =
                "spec.roles[].kind behind vllm-router or sglang-gateway must be all Server, or a split of Prefill and Decode roles with at least one of each",
        fieldPath = ".roles")
@ValidationRule(
        value = "self.roles.all(r, !has(r.size) || r.size < 2 || !has(r.port)"
                + " || !((self.engine.name == '" + WireNames.VLLM + "' && r.port == "
                + ModelDeploymentSpec.VLLM_RENDEZVOUS_PORT + ")"
                + " || (self.engine.name == '" + WireNames.SGLANG + "' && r.port == "
                + ModelDeploymentSpec.SGLANG_RENDEZVOUS_PORT
                + ")))",
        message = "spec.roles[].port of a multi-Pod replica must not be the engine's rendezvous port on the leader: "
                + ModelDeploymentSpec.VLLM_RENDEZVOUS_PORT + " for vLLM, " + ModelDeploymentSpec.SGLANG_RENDEZVOUS_PORT
                + " for SGLang",
        fieldPath = ".roles")
@ValidationRule(
        value = "!has(self.router) || self.router.name != '" + WireNames.LLM_D_ROUTER
                + "' || self.roles.all(r, !has(r.kind) || r.kind != '" + WireNames.DECODE + "'"
                + " || (has(r.command) && size(r.command) > 0) || !has(r.port) || r.port != "
                + ModelDeploymentSpec.ROUTING_PROXY_ENGINE_PORT + ")",
        message = ModelDeploymentSpec.PORT_OF_THE_PROXIED_ENGINE,
        fieldPath = ".roles")
// the first role is a fine default only when every role serves whole requests; of a split, an autoscaler must be
// told which half its metric speaks for
@ValidationRule(
        value = "!self.roles.exists(r, has(r.kind) && r.kind != '" + WireNames.SERVER
                + "') || (has(self.scaling) && has(self.scaling.role))",
        message = ModelDeploymentSpec.SCALING_ROLE_REQUIRED,
        fieldPath = ".scaling.role")
@ValidationRule(
        value = "!has(self.scaling) || !has(self.scaling.role) || self.roles.exists(r, r.name == self.scaling.role)",
        message = ModelDeploymentSpec.SCALING_ROLE_UNKNOWN,
        fieldPath = ".scaling.role")
@ValidationRule(
        value = "self.roles.all(r, self.roles.exists_one(o, o.name == r.name))",
        message = "spec.roles[].name must be unique",
        fieldPath = ".roles")
public record ModelDeploymentSpec(
        @Required ModelSpec model,
        @Required EngineSpec engine,

        @JsonPropertyDescription(
                "Optional router in front of the roles; without it clients reach roles through their Services.")
        RouterSpec router,

        @Required @Size(min = 1, max = ModelDeploymentSpec.MAX_ROLES)
        List<RoleSpec> roles,

        @JsonPropertyDescription(
                "The role the scale subresource drives (HPA, KEDA, kubectl scale) and the replicas they write.")
        ScalingSpec scaling) {
    public static final int MAX_ROLES = 10;
    /** Said by admission and by the operator alike. */
    public static final String SCALING_ROLE_REQUIRED = "spec.scaling.role is required when a role is Prefill or Decode:"
            + " the scale subresource (HPA, KEDA, kubectl scale) must be told which role to scale";

    public static final String SCALING_ROLE_UNKNOWN = "spec.scaling.role must name one of spec.roles[].name";

    /** A deployment without a scaling section: the scale subresource drives the first role. */
    public ModelDeploymentSpec(ModelSpec model, EngineSpec engine, RouterSpec router, List<RoleSpec> roles) {
        this(model, engine, router, roles, null);
    }
    /**
     * Where the engine of a Decode role behind llm-d-router listens, its routing proxy taking the role's port in front
     * of it (pkg/sidecar/proxy/options.go defaultVLLMPort "8200" at llm-d-router v0.10.0, given explicitly all the same).
     */
    public static final int ROUTING_PROXY_ENGINE_PORT = 8200;

    public static final String PORT_OF_THE_PROXIED_ENGINE =
            "spec.roles[].port of a Decode role behind llm-d-router must not be " + ROUTING_PROXY_ENGINE_PORT
                    + ": the routing proxy in front of the role's engine has the engine itself listen there";
    /** torch.distributed's rendezvous port on a multi-Pod vLLM replica's leader (--master-port), rendered by VllmProfile. */
    public static final int VLLM_RENDEZVOUS_PORT = 29500;
    /** The port of SGLang's --dist-init-addr on a multi-Pod replica's leader, rendered by SglangProfile. */
    public static final int SGLANG_RENDEZVOUS_PORT = 5000;
}
