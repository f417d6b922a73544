package dev.ebb.operator.retire;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.DrainWarning;
import dev.ebb.operator.read.Reading;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Whether a replica's followers hold requests that only their own pages count. SGLang records request gauges in the
 * first tensor-parallel rank of each data-parallel group (python/sglang/srt/managers/scheduler.py at v0.5.4,
 * python/sglang/srt/observability/metrics_collector.py at v0.5.23), and a node of rank 1 or more serves the gauges of
 * its own schedulers on its own /metrics (python/sglang/srt/entrypoints/engine.py, launch_dummy_health_check_server).
 * So once a multi-Pod SGLang replica runs data-parallel groups, those that start on a follower show their requests on
 * that follower alone, and the leader's page, which the hook and the member reads ask, may read idle while they work.
 * Tensor or pipeline parallelism across nodes keeps the counts on the leader. Pure.
 */
public final class FollowerGauges {
    public static final String REASON = "FollowerGaugesUnread";
    /** SGLang's data-parallel sizes, under every name its releases take (v0.5.4 server_args.py, v0.5.23 arg_groups). */
    private static final Set<String> DATA_PARALLEL_SIZES = Set.of("--dp-size", "--dp", "--data-parallel-size", "--attn-dp-size",
            "--attention-data-parallel-size");
    private static final String DATA_PARALLEL_ATTENTION = "--enable-dp-attention";

    private FollowerGauges() {
    }

    /** The data-parallel flag a multi-Pod SGLang role's arguments set, when its followers count requests of their own. */
    public static Optional<String> unreadOnTheLeader(Engine engine, int size, List<String> extraArgs) {
        if (engine != Engine.SGLANG || size < 2) {
            return Optional.empty();
        }
        for (int i = 0; i < extraArgs.size(); i++) {
            String arg = extraArgs.get(i);
            if (DATA_PARALLEL_ATTENTION.equals(arg)) {
                return Optional.of(arg);
            }
            String flag = Argv.flagOf(arg);
            if (!DATA_PARALLEL_SIZES.contains(flag)) {
                continue;
            }
            String value = Argv.valueAt(extraArgs, i);
            if (!value.matches("\\d{1,9}") || Integer.parseInt(value) > 1) {
                // a value SGLang may not read as 1 is taken as more than one group
                return Optional.of(flag + " " + value);
            }
        }
        return Optional.empty();
    }

    /**
     * A replica's reading as the retirement may take it: an idle leader proves nothing of the requests its followers
     * count on pages of their own, so it holds as unread.
     *
     * @param setting the role's data-parallel setting, as {@link #unreadOnTheLeader} found it
     */
    public static Reading asRead(Reading leader, Optional<String> setting) {
        return setting.isPresent() && leader instanceof Reading.Idle
                ? new Reading.Failed("its followers count their data-parallel groups' requests on their own /metrics (" + setting.get()
                        + "), which the operator does not read")
                : leader;
    }

    /** What the role's status and a Warning Event say of such a role. */
    public static DrainWarning warning(String setting) {
        return new DrainWarning(REASON, "a multi-Pod SGLang replica with data parallelism (" + setting + ") runs data-parallel groups on"
                + " its followers, whose requests SGLang counts only on each follower's own /metrics; the drain hook and the member"
                + " reads ask the leader, so the operator holds such a replica's retirement rather than read it idle, and a replica"
                + " deleted from outside (kubectl delete, a node drain) may still have streams on a follower cut");
    }
}
