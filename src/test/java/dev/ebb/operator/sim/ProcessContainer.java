package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.Container;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A container whose first process is a process of this machine, signalled as the container runtime signals it. */
public record ProcessContainer(Process process) implements EngineContainer {
    /** The exit status of a process ended by SIGKILL, as the runtime reports a killed container. */
    public static final int KILLED = 137;

    /**
     * A container's own variables as its process gets them here: only literal values. One taken from a ConfigMap,
     * Secret or field (valueFrom) is left out, since nothing in this world resolves it.
     */
    public static Map<String, String> literalEnvironment(Container container) {
        Map<String, String> env = new HashMap<>();
        Optional.ofNullable(container.getEnv()).orElse(List.of()).stream()
                .filter(v -> v.getValue() != null)
                .forEach(v -> env.put(v.getName(), v.getValue()));
        return env;
    }
    /** SIGTERM to the first process alone. */
    @Override
    public void sigterm() {
        process.destroy();
    }

    /** SIGKILL to the whole process tree, as a container's cgroup is killed. */
    @Override
    public void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    @Override
    public boolean exited() {
        return !process.isAlive();
    }
}
