package dev.ebb.operator.config;

import dev.ebb.operator.api.v1alpha1.Engine;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Operator-wide settings, under the {@code ebb.} prefix. */
@ConfigMapping(prefix = "ebb")
public interface EbbConfig {

    /** Images used when neither the role nor spec.engine names one. */
    Images images();

    Retirement retirement();

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

        default String of(Engine engine) {
            return switch (engine) {
                case VLLM -> vllm();
                case SGLANG -> sglang();
            };
        }
    }
}
