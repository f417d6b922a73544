package dev.ebb.operator.sim;

/** A container whose first process is a process of this machine, signalled as the container runtime signals it. */
public record ProcessContainer(Process process) implements EngineContainer {
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
