package dev.ebb.operator.bench;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LoopbackAddresses;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Member Pods as a reader sees them, each on its own running fake vLLM engine; no API server involved. */
final class FakeMembers implements AutoCloseable {
    private static final int ENGINE_PORT = 8000;
    private final List<FakeEngine> engines = new ArrayList<>();
    private final List<Pod> pods = new ArrayList<>();

    FakeMembers(int count) throws IOException {
        LoopbackAddresses addresses = new LoopbackAddresses();
        try {
            for (int i = 0; i < count; i++) {
                FakeEngine engine = FakeEngine.start(Engine.VLLM, addresses.next(), ENGINE_PORT, "m");
                engines.add(engine);
                pods.add(new PodBuilder()
                        .withNewMetadata()
                        .withName("m" + i)
                        .withNamespace("bench")
                        .addToAnnotations(Annotations.SCRAPE_PORT, Integer.toString(ENGINE_PORT))
                        .endMetadata()
                        .withNewStatus()
                        .withPodIP(engine.host())
                        .endStatus()
                        .build());
            }
        } catch (IOException e) {
            close();
            throw e;
        }
    }

    List<Pod> pods() {
        return pods;
    }

    @Override
    public void close() {
        engines.forEach(FakeEngine::close);
    }
}
