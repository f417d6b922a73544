package dev.ebb.operator.bench;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.reconcile.RouterObjects;
import dev.ebb.operator.render.RouterRenderer;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What keeping a router as rendered costs each pass of a deployment with a router: every object the renderer gives
 * compared with the cached one (here, the same object as read back from JSON, as an informer holds it), in the
 * operator's own code, on this JVM after warm-up.
 */
public final class RouterComparison {
    private static final KubernetesSerialization JSON = new KubernetesSerialization();
    private static final int PASSES_PER_BATCH = 2_000;
    private static final int BATCHES = 15;
    private static final int WARM_UP_BATCHES = 5;

    private RouterComparison() {}

    static void run() {
        Map<String, String> engines = Map.of("llm-d-router", "vLLM", "vllm-router", "vLLM", "sglang-gateway", "SGLang");
        System.out.printf(
                Locale.ROOT,
                "Router objects compared with their rendering, one pass = every object of one router,"
                        + " %d batches of %d passes (microseconds per pass)%n",
                BATCHES,
                PASSES_PER_BATCH);
        Columns.header();
        engines.forEach((kind, engine) -> {
            DesiredDeployment deployment = Specs.deployment("qwen", engine)
                    .namespace("bench")
                    .router(kind)
                    .role(Specs.role("server"))
                    .desired();
            List<HasMetadata> rendered = RouterRenderer.render(deployment);
            List<HasMetadata> cached = rendered.stream()
                    .map(o -> (HasMetadata) JSON.unmarshal(JSON.asJson(o), o.getClass()))
                    .toList();
            List<Double> micros = new ArrayList<>();
            for (int batch = 0; batch < WARM_UP_BATCHES + BATCHES; batch++) {
                long start = System.nanoTime();
                int held = 0;
                for (int pass = 0; pass < PASSES_PER_BATCH; pass++) {
                    for (int i = 0; i < rendered.size(); i++) {
                        held += RouterObjects.asRendered(rendered.get(i), cached.get(i)) ? 1 : 0;
                    }
                }
                if (held != PASSES_PER_BATCH * rendered.size()) {
                    throw new IllegalStateException("a router read back from JSON no longer holds its rendering");
                }
                if (batch >= WARM_UP_BATCHES) {
                    micros.add((System.nanoTime() - start) / 1_000.0 / PASSES_PER_BATCH);
                }
            }
            Columns.row(kind + ", " + rendered.size() + " objects", micros);
        });
        System.out.println();
    }

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(RouterComparison::run);
    }
}
