package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.util.Optional;

/** How the kubelet starts the engine of a Pod it runs: the test world's fake engines, or a real engine's process. */
@FunctionalInterface
public interface EngineRuntime {
    /**
     * @param address the Pod's address, where the engine must listen
     * @return the started container; empty when the Pod's first container runs no engine this runtime starts
     */
    Optional<EngineContainer> start(Pod pod, String address) throws IOException;
}
