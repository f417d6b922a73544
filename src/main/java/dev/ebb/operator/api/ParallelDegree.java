package dev.ebb.operator.api;

import java.util.List;
import java.util.Set;

/**
 * How many accelerators one replica's engine spreads over, read from its arguments: the product of its tensor,
 * pipeline and data parallel sizes, in the spellings vLLM (v0.33.0, vllm/engine/arg_utils.py) and SGLang (v0.5.23,
 * python/sglang/srt/server_args.py) take. Pure; an unreadable value counts as 1.
 */
final class ParallelDegree {
    private static final Set<String> TENSOR = Set.of("--tensor-parallel-size", "-tp", "--tp-size", "--tp");
    private static final Set<String> PIPELINE = Set.of("--pipeline-parallel-size", "-pp", "--pp-size");
    private static final Set<String> DATA = Set.of("--data-parallel-size", "-dp", "--dp-size", "--dp");
    private static final int MOST = 1 << 16;

    private ParallelDegree() {}

    static int of(List<String> args) {
        return (int) Math.min(MOST, (long) size(args, TENSOR) * size(args, PIPELINE) * size(args, DATA));
    }

    private static int size(List<String> args, Set<String> spellings) {
        int size = 1;
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i) != null && spellings.contains(Argv.flagOf(args.get(i)))) {
                try {
                    size = Math.max(
                            1,
                            Math.min(
                                    MOST, Integer.parseInt(Argv.valueAt(args, i).trim())));
                } catch (NumberFormatException e) {
                    size = 1;
                }
            }
        }
        return size;
    }
}
