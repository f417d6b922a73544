package dev.ebb.operator.config;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.time.Duration;
import java.util.Optional;

/** Operator-wide settings, under the {@code ebb.} prefix. */
@ConfigMapping(prefix = "ebb")
public interface EbbConfig {

    /** Images used when neither the role nor spec.engine names one. */
    Images images();

    Retirement retirement();

    LeaderElection leaderElection();

    /** The Lease that lets one operator Pod act at a time; only in the profiles QOSDK elects in (prod). */
    interface LeaderElection {
        @WithDefault("ebb-operator")
        String leaseName();

        /** Defaults to the namespace the operator's client is in: its own Pod's, in a cluster. */
        Optional<String> namespace();

        /** Defaults to the host name, which in a cluster is the Pod's name. */
        Optional<String> identity();
    }

    interface Retirement {
        /** How long an aborted retirement waits before it is retried by itself; refusals are never retried so. */
        @WithDefault("5m")
        Duration coolDown();
    }

    interface Images {
        @WithDefault("vllm/vllm-openai:v0.11.0")
        String vllm();

        @WithDefault("lmsysorg/sglang:v0.5.4")
        String sglang();

        /** llm-d's endpoint picker. No release could be checked from where this was built: pin the one you run. */
        @WithName("llm-d-router")
        @WithDefault("ghcr.io/llm-d/llm-d-router-endpoint-picker:latest")
        String llmDRouter();

        /** vLLM's production-stack router, the image its Helm chart uses. */
        @WithName("vllm-router")
        @WithDefault("lmcache/lmstack-router:latest")
        String vllmRouter();

        /** SGLang's model gateway. */
        @WithName("sglang-gateway")
        @WithDefault("lmsysorg/sgl-model-gateway:latest")
        String sglangGateway();

        default String of(RouterKind kind) {
            return switch (kind) {
                case LLM_D_ROUTER -> llmDRouter();
                case VLLM_ROUTER -> vllmRouter();
                case SGLANG_GATEWAY -> sglangGateway();
            };
        }

        default String of(Engine engine) {
            return switch (engine) {
                case VLLM -> vllm();
                case SGLANG -> sglang();
            };
        }
    }
}
