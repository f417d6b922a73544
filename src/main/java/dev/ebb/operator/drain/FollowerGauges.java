package dev.ebb.operator.drain;

import dev.ebb.operator.api.Argv;
import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Whether a replica's followers count requests that only their own pages show. SGLang records request gauges in the
 * first tensor-parallel rank of each attention data-parallel group (python/sglang/srt/managers/scheduler.py at v0.5.4,
 * python/sglang/srt/observability/metrics_collector.py at v0.5.23), and a node of rank 1 or more serves the gauges of
 * its own schedulers on its own /metrics, on the serving port (python/sglang/srt/entrypoints/engine.py,
 * launch_dummy_health_check_server, at v0.5.4 and v0.5.23). So once a multi-Pod SGLang replica runs data-parallel
 * groups, those that start on a follower show their requests on that follower alone: the reads and every member's
 * hook then read every member. A node that starts no group's first rank would publish no request gauge at all, so the
 * operator also renders {@link #ALL_SCHEDULERS}, under which every scheduler records its own series (label tp_rank).
 * Tensor or pipeline parallelism across nodes keeps the counts on the leader. Pure.
 */
public final class FollowerGauges {
    public static final String ALL_SCHEDULERS = "--enable-metrics-for-all-schedulers";
    /** SGLang's data-parallel sizes, under every name its releases take (v0.5.4 server_args.py, v0.5.23 arg_groups). */
    private static final Set<String> DATA_PARALLEL_SIZES =
            Set.of("--dp-size", "--dp", "--data-parallel-size", "--attn-dp-size", "--attention-data-parallel-size");

    private static final String DATA_PARALLEL_ATTENTION = "--enable-dp-attention";

    private FollowerGauges() {}

    /**
     * The data-parallel flag a multi-Pod SGLang replica's arguments set, when its followers count requests of their
     * own; empty when the leader's page counts them all.
     */
    public static Optional<String> onFollowers(Engine engine, int size, List<String> args) {
        if (engine != Engine.SGLANG || size < 2) {
            return Optional.empty();
        }
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (DATA_PARALLEL_ATTENTION.equals(arg)) {
                return Optional.of(arg);
            }
            String flag = Argv.flagOf(arg);
            if (!DATA_PARALLEL_SIZES.contains(flag)) {
                continue;
            }
            String value = Argv.valueAt(args, i);
            if (!value.matches("\\d{1,9}") || Integer.parseInt(value) > 1) {
                // a value SGLang may not read as 1 is taken as more than one group
                return Optional.of(flag + " " + value);
            }
        }
        return Optional.empty();
    }

    /** Whether the operator adds {@link #ALL_SCHEDULERS} to a role's command line: it needs it and does not set it. */
    public static boolean rendersAllSchedulers(Engine engine, int size, List<String> extraArgs) {
        return onFollowers(engine, size, extraArgs).isPresent() && !extraArgs.contains(ALL_SCHEDULERS);
    }
}
