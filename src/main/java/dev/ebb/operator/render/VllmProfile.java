package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.drain.DrainTimeline;
import dev.ebb.operator.drain.EngineShutdown;
import java.util.ArrayList;
import java.util.List;

/** vLLM's command line; every flag the operator sets is here. */
final class VllmProfile implements EngineProfile {
    static final VllmProfile INSTANCE = new VllmProfile();

    /**
     * KV cache handed between prefill and decode instances over NIXL, each instance able to send and receive.
     * https://docs.vllm.ai/en/latest/features/nixl_connector_usage.html
     */
    static final String KV_TRANSFER_CONFIG = "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}";
    /** torch.distributed rendezvous port on the leader for multi-node runs without Ray. */
    static final String MASTER_PORT = Integer.toString(ModelDeploymentSpec.VLLM_RENDEZVOUS_PORT);

    private VllmProfile() {}

    @Override
    public List<String> command(MemberSlot slot, DrainTimeline timeline) {
        DesiredRole role = slot.role();
        List<String> argv = new ArrayList<>();
        // `vllm serve <model>` with the OpenAI-compatible server flags: https://docs.vllm.ai/en/latest/cli/serve.html
        argv.addAll(List.of("vllm", "serve", slot.deployment().modelSource()));
        argv.addAll(ServingFlags.of(slot));
        if (role.kind() != RoleKind.Server) {
            // https://docs.vllm.ai/en/latest/features/disagg_prefill.html
            argv.addAll(List.of("--kv-transfer-config", KV_TRANSFER_CONFIG));
        }
        if (role.size() > 1) {
            // Multi-node with the multiprocessing backend: one process per node, followers headless.
            // https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html
            argv.addAll(List.of(
                    "--nnodes",
                    Integer.toString(role.size()),
                    "--node-rank",
                    Integer.toString(slot.member()),
                    "--master-addr",
                    slot.leaderHost(),
                    "--master-port",
                    MASTER_PORT));
            if (!slot.leader()) {
                argv.add("--headless");
            }
        }
        // A request the hook could not wait for is finished, or refused, rather than aborted at SIGTERM.
        timeline.engineShutdown()
                .ifPresent(seconds -> argv.addAll(List.of(EngineShutdown.VLLM_FLAG, Integer.toString(seconds))));
        argv.addAll(role.extraArgs());
        return List.copyOf(argv);
    }

    @Override
    public String healthPath() {
        // https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html
        return "/health";
    }

    @Override
    public List<String> tlsFlags() {
        // https://docs.vllm.ai/en/latest/cli/serve.html (--ssl-certfile, --ssl-keyfile)
        return List.of("--ssl-certfile");
    }
}
