package dev.ebb.operator.render;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.DrainTimeline;
import java.util.List;

/** Everything engine-specific about launching a member: its command line and where it answers. */
public interface EngineProfile {
    /**
     * The whole argv of an operator-built member, {@code extraArgs} last so that they can override.
     *
     * @param timeline the role's drain window, which sizes the engine's own drain where it has one
     */
    List<String> command(MemberSlot slot, DrainTimeline timeline);

    /** The HTTP path the readiness probe asks. */
    String healthPath();

    /** Flags that make the engine serve TLS, so that probes and scrapes must use https. */
    List<String> tlsFlags();

    static EngineProfile of(Engine engine) {
        return switch (engine) {
            case VLLM -> VllmProfile.INSTANCE;
            case SGLANG -> SglangProfile.INSTANCE;
        };
    }
}
