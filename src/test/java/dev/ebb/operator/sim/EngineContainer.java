package dev.ebb.operator.sim;

/** A Pod's engine container as the kubelet handles it: signalled, killed, watched until it has exited. */
public interface EngineContainer {
    /** SIGTERM: what the engine does with it is its own. */
    void sigterm();

    /** SIGKILL to everything the container runs. */
    void kill();

    boolean exited();
}
