package dev.ebb.operator.drain;

import dev.ebb.operator.api.Argv;
import dev.ebb.operator.api.EngineRelease;
import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.List;

/**
 * vLLM's own drain on SIGTERM, the backstop behind the hook: given {@code --shutdown-timeout N} above 0, vLLM refuses
 * new requests and lets those it holds run for up to N s before it aborts the rest and exits; its default 0 aborts
 * everything at SIGTERM ({@code vllm/engine/arg_utils.py}, {@code vllm/v1/engine/core.py}, first at v0.18.0, read again
 * at v0.33.0). The operator sizes it where the release has it and the role does not set it itself. Pure.
 */
public final class EngineShutdown {
    public static final String VLLM_FLAG = "--shutdown-timeout";
    public static final EngineRelease VLLM_SINCE = new EngineRelease(0, 18, 0);
    /** vLLM's argument parser takes a flag's words joined by underscores as well as by dashes. */
    private static final String VLLM_FLAG_UNDERSCORED = "--shutdown_timeout";

    private EngineShutdown() {}

    /**
     * Whether the operator renders the flag: vLLM at a release that has it (or whose tag names none, taken as current),
     * and a role whose own arguments leave it unset.
     */
    public static boolean operatorSizes(Engine engine, String image, List<String> extraArgs) {
        return engine == Engine.VLLM && !EngineRelease.olderThan(image, VLLM_SINCE) && !setIn(extraArgs);
    }

    /** Whether an argv sets the flag, in any spelling vLLM's parser takes. */
    static boolean setIn(List<String> argv) {
        return argv.stream()
                .map(Argv::flagOf)
                .anyMatch(flag -> flag.equals(VLLM_FLAG) || flag.equals(VLLM_FLAG_UNDERSCORED));
    }
}
