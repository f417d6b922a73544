package dev.ebb.operator.api.v1alpha1;

import java.util.List;

/**
 * A role's drain window as the operator rendered it, in seconds from a Pod's deletion. The read fields are absent
 * for a role whose Pods get no drain hook.
 */
public record DrainStatus(Integer graceSeconds, Integer lastReadStartsBy, Integer sigtermBy, List<Warning> warnings) {
    public record Warning(String reason, String message) {
    }
}
