package dev.ebb.operator.retire;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.List;

/** What a replica, as it was deployed, allows the protocol to do. */
public sealed interface Classification {
    /** These members' reads speak for the whole replica, which runs this engine. */
    record Answerable(Engine engine, List<String> answering) implements Classification {}

    /**
     * The replica lost its leader for good and only followers are left: no client and no router ever reaches a
     * follower, so nothing of the replica can be in flight, and it is deleted without being read. Followers take no
     * requests in the engines themselves: SGLang's node ranks above 0 start no tokenizer and answer only a fixed
     * /health (python/sglang/srt/entrypoints/engine.py, _launch_subprocesses, at v0.5.6), and vLLM's --headless nodes
     * run workers without an API server (vllm/entrypoints/cli/serve.py, run_headless, at upstream 2fd893b4c, the
     * multi-node mp backend's first release not checked against a tag).
     */
    record Unreachable(String message) implements Classification {}

    /** Nothing can be read from the replica; it is held until the budgets run out. */
    record Held(Reason reason, String message) implements Classification {}

    /** The protocol never deletes this replica. */
    record Refused(Reason reason, String message) implements Classification {}
}
