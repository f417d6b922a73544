package dev.ebb.operator.api.v1alpha1;

import java.util.List;

/**
 * A role's drain window as the operator rendered it, in seconds from a Pod's deletion. The read fields are absent
 * for a role whose Pods get no drain hook; {@code engineShutdownSeconds}, the engine's own drain after SIGTERM the
 * operator rendered (vLLM's --shutdown-timeout), is absent where it renders none.
 */
public record DrainStatus(
        Integer graceSeconds,
        Integer lastReadStartsBy,
        Integer sigtermBy,
        Integer engineShutdownSeconds,
        List<Warning> warnings) {
    public record Warning(String reason, String message) {}
}
