package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.drain.DrainTimeline;
import dev.ebb.operator.drain.FollowerGauges;
import java.util.ArrayList;
import java.util.List;

/** SGLang's command line; every flag the operator sets is here. */
final class SglangProfile implements EngineProfile {
    static final SglangProfile INSTANCE = new SglangProfile();

    /** Port on the leader where the members of a multi-node replica rendezvous. */
    static final String DIST_INIT_PORT = Integer.toString(ModelDeploymentSpec.SGLANG_RENDEZVOUS_PORT);

    private SglangProfile() {}

    @Override
    public List<String> command(MemberSlot slot, DrainTimeline timeline) {
        DesiredRole role = slot.role();
        List<String> argv = new ArrayList<>();
        // Server arguments: https://docs.sglang.ai/advanced_features/server_arguments.html
        // --enable-metrics turns on the /metrics page the drain reads.
        argv.addAll(List.of(
                "python3",
                "-m",
                "sglang.launch_server",
                "--model-path",
                slot.deployment().modelSource()));
        argv.addAll(ServingFlags.of(slot));
        argv.add("--enable-metrics");
        if (role.kind() == RoleKind.Prefill) {
            // https://docs.sglang.ai/advanced_features/pd_disaggregation.html
            argv.addAll(List.of("--disaggregation-mode", "prefill"));
        } else if (role.kind() == RoleKind.Decode) {
            argv.addAll(List.of("--disaggregation-mode", "decode"));
        }
        if (role.size() > 1) {
            // https://docs.sglang.ai/references/multi_node_deployment/multi_node.html
            argv.addAll(List.of(
                    "--nnodes",
                    Integer.toString(role.size()),
                    "--node-rank",
                    Integer.toString(slot.member()),
                    "--dist-init-addr",
                    slot.leaderHost() + ":" + DIST_INIT_PORT));
        }
        if (FollowerGauges.rendersAllSchedulers(slot.deployment().engine(), role.size(), role.extraArgs())) {
            // every node then publishes the gauges of its own schedulers, which the reads and hooks of such a replica
            // sum
            argv.add(FollowerGauges.ALL_SCHEDULERS);
        }
        argv.addAll(role.extraArgs());
        return List.copyOf(argv);
    }

    /** The readiness probe's path: https://docs.sglang.ai/basic_usage/native_api.html (health check). */
    @Override
    public String healthPath() {
        return "/health";
    }

    /** Serving over TLS: https://docs.sglang.ai/advanced_features/server_arguments.html (--ssl-certfile). */
    @Override
    public List<String> tlsFlags() {
        return List.of("--ssl-certfile");
    }
}
