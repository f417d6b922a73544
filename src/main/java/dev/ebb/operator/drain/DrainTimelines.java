package dev.ebb.operator.drain;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The drain-timeline calculator: one pure function that every other part asks for the drain window's numbers. A bean so
 * that it is injected where used; it holds no state, client, clock or I/O, and tests build it with {@code new}.
 */
@ApplicationScoped
public class DrainTimelines {
    public static final int SETTLE = 5;
    public static final int INTERVAL = 1;
    public static final int READ_TIMEOUT = 2;
    public static final int LAST_READ_MARGIN = 5;
    /** An idle replica's hook returns on its second idle read, one interval after the first. */
    public static final int IDLE_RETURN = SETTLE + INTERVAL;
    /** SGLang's split-role engines wait a fixed 15 s for their scheduler after SIGTERM, then exit: about 20 s in all. */
    public static final int SGLANG_SPLIT_EXIT = 20;
    /** The grace that leaves a split-role SGLang engine its exit time after a busy drain. */
    public static final int SGLANG_SPLIT_MIN_GRACE = 45;
    /**
     * Kept free after vLLM's own drain ends, for it to stop its API server and engine core before the kill: vLLM
     * 0.32.0 on CPU exited 0.3 to 7.6 s after its last stream ended, the longer ones on a loaded machine (the engine
     * tier). An exit slower than this meets the kill with nothing left to cut, while a wider margin would take the
     * time from the drain, where a stream still running at its end is cut.
     */
    public static final int ENGINE_EXIT_MARGIN = 5;

    public DrainTimelines() {}

    /**
     * @param grace the role's terminationGracePeriodSeconds, empty when unset
     * @param takeOver the role replaces the command line, so the operator cannot drain it
     * @param proxyStopsAtDelete a routing proxy in front of the engine runs as an ordinary container (a cluster
     *     without native sidecars), so the kubelet stops it at the Pod's deletion, alongside the engine's hook
     * @param engineShutdownSized the engine drains on SIGTERM for as long as the operator tells it
     *     ({@link EngineShutdown#operatorSizes})
     */
    public DrainTimeline of(
            Optional<Integer> grace,
            Engine engine,
            RoleKind kind,
            boolean takeOver,
            boolean proxyStopsAtDelete,
            boolean engineShutdownSized) {
        List<DrainWarning> warnings = new ArrayList<>();
        if (takeOver) {
            warnings.add(new DrainWarning(
                    DrainWarning.NO_DRAIN_HOOK,
                    "the role sets command, so its Pods get no drain hook: a deleted replica gets SIGTERM at once and "
                            + "requests it still holds may be cut"));
            return new DrainTimeline(
                    grace,
                    false,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty(),
                    List.copyOf(warnings));
        }
        int g = grace.orElse(RoleSpec.DEFAULT_GRACE_SECONDS);
        Optional<Integer> exitAfterSigterm = Optional.empty();
        Optional<Integer> latestClean = Optional.empty();
        if (engine == Engine.SGLANG && kind != RoleKind.Server) {
            exitAfterSigterm = Optional.of(SGLANG_SPLIT_EXIT);
            // no hook returns before the delete, so a grace under 20 s leaves no clean return at all
            int latest = Math.max(0, g - SGLANG_SPLIT_EXIT);
            latestClean = Optional.of(latest);
            if (g < SGLANG_SPLIT_MIN_GRACE) {
                String killed = latest < IDLE_RETURN
                        ? "even an idle replica, whose hook returns after " + IDLE_RETURN + " s, is killed at " + g
                                + " s"
                        : "a hook returning after " + latest + " s leaves too little and the engine is killed at " + g
                                + " s";
                warnings.add(new DrainWarning(
                        DrainWarning.GRACE_TOO_SHORT,
                        "an SGLang " + kind + " engine needs about " + SGLANG_SPLIT_EXIT
                                + " s after SIGTERM even when idle; with a grace of " + g + " s " + killed
                                + "; set terminationGracePeriodSeconds to " + SGLANG_SPLIT_MIN_GRACE + " or more"));
            }
        }
        if (proxyStopsAtDelete) {
            warnings.add(new DrainWarning(
                    DrainWarning.PROXY_STOPS_AT_DELETE,
                    "below Kubernetes 1.29 the routing proxy in front of the engine runs as an ordinary container, which gets SIGTERM"
                            + " as soon as a Pod is deleted while the engine's hook still drains: a Pod deleted outside the operator"
                            + " (kubectl delete, a node drain) may have streams through the proxy cut; the operator's own retirements"
                            + " delete only replicas proven idle"));
        }
        // Sized for a hook that returns on its idle reads: a request the gauges did not show yet then has the rest of
        // the grace to finish in. A hook that gives up at sigtermBy leaves less, and the kill ends that drain instead.
        int shutdown = g - IDLE_RETURN - ENGINE_EXIT_MARGIN;
        Optional<Integer> engineShutdown =
                engineShutdownSized && shutdown > 0 ? Optional.of(shutdown) : Optional.empty();
        return new DrainTimeline(
                Optional.of(g),
                true,
                SETTLE,
                INTERVAL,
                READ_TIMEOUT,
                LAST_READ_MARGIN,
                g - LAST_READ_MARGIN,
                g - LAST_READ_MARGIN + READ_TIMEOUT,
                IDLE_RETURN,
                exitAfterSigterm,
                latestClean,
                engineShutdown,
                List.copyOf(warnings));
    }
}
