package dev.ebb.operator.sim;

import dev.ebb.operator.api.EngineRelease;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.EngineShutdown;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What a released engine does on SIGTERM, decided from the container as the kubelet starts it: the version from the
 * image's tag, the flags from its command line. Pure.
 *
 * @param drains whether it stops taking new requests and lets the ones it holds finish, rather than aborting them
 * @param limit how long it drains before generation stops: a stream still open then stalls, and the engine stays
 *     until it is killed; empty when it drains without bound
 */
public record SigtermConduct(boolean drains, Optional<Duration> limit) {
    public static final SigtermConduct ABORT = new SigtermConduct(false, Optional.empty());
    public static final SigtermConduct DRAIN_WITHOUT_BOUND = new SigtermConduct(true, Optional.empty());

    public static SigtermConduct drainFor(Duration limit) {
        return new SigtermConduct(true, Optional.of(limit));
    }

    public static SigtermConduct of(Engine engine, String image, List<String> command) {
        return switch (engine) {
            // python/sglang/srt/managers/tokenizer_manager.py, sigterm_watchdog: after SIGTERM it waits, looking every
            // 5 s, while any request is left, and only then exits; nothing bounds the wait but the kubelet's kill
            // (read in recent sources and in an early one alike; tag not checked)
            case SGLANG -> DRAIN_WITHOUT_BOUND;
            case VLLM -> vllm(EngineRelease.of(image), shutdownTimeoutSeconds(command));
        };
    }

    private static SigtermConduct vllm(Optional<EngineRelease> version, Optional<Integer> timeout) {
        if (version.isPresent() && version.get().compareTo(EngineShutdown.VLLM_SINCE) < 0) {
            return ABORT;
        }
        // an image whose tag names no release still understands the flag if it started with it
        return timeout.filter(seconds -> seconds > 0)
                .map(seconds -> drainFor(Duration.ofSeconds(seconds)))
                .orElse(ABORT);
    }

    /** The flag's value, whether given as {@code --shutdown-timeout 30} or {@code --shutdown-timeout=30}; the last one wins. */
    static Optional<Integer> shutdownTimeoutSeconds(List<String> command) {
        Optional<Integer> found = Optional.empty();
        for (int i = 0; i < command.size(); i++) {
            String arg = command.get(i);
            String value = null;
            if (arg.equals(EngineShutdown.VLLM_FLAG) && i + 1 < command.size()) {
                value = command.get(i + 1);
            } else if (arg.startsWith(EngineShutdown.VLLM_FLAG + "=")) {
                value = arg.substring(EngineShutdown.VLLM_FLAG.length() + 1);
            }
            if (value != null) {
                try {
                    found = Optional.of(Integer.parseInt(value.trim()));
                } catch (NumberFormatException e) {
                    // the real argument parser would refuse to start; the fake keeps its default
                }
            }
        }
        return found;
    }
}
