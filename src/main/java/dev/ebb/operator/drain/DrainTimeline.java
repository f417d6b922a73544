package dev.ebb.operator.drain;

import java.util.List;
import java.util.Optional;

/**
 * Every number of one role's drain window, in seconds from the moment a Pod is deleted.
 *
 * @param grace the Pod's grace period; empty for a take-over role that set none (Kubernetes' default applies)
 * @param hooked whether the engine container gets the drain hook
 * @param settle the engine serves on undisturbed this long, for requests routed just before the delete
 * @param interval reads start this often
 * @param readTimeout a read taking longer counts as busy
 * @param lastReadMargin no read starts later than this before the grace ends
 * @param lastReadStartsBy the latest moment a read starts
 * @param sigtermBy the latest moment the hook returns and the engine gets SIGTERM
 * @param idleReturn when the hook of an idle replica returns: its second idle read
 * @param exitAfterSigterm how long the engine needs after SIGTERM even when idle, when that is known to matter
 * @param latestCleanHookReturn a hook returning later than this leaves the engine too little time and it is killed;
 *     0 when the grace is too short for any hook, and below {@code idleReturn} even an idle replica is killed
 * @param engineShutdown the engine's own drain after SIGTERM, as the operator renders it ({@link EngineShutdown}):
 *     new requests are refused and those held run on for up to this long; empty when the operator renders none
 */
public record DrainTimeline(
        Optional<Integer> grace,
        boolean hooked,
        int settle,
        int interval,
        int readTimeout,
        int lastReadMargin,
        int lastReadStartsBy,
        int sigtermBy,
        int idleReturn,
        Optional<Integer> exitAfterSigterm,
        Optional<Integer> latestCleanHookReturn,
        Optional<Integer> engineShutdown,
        List<DrainWarning> warnings) {}
