package dev.ebb.operator.sim;

/** A Pod's engine container as the kubelet handles it: signalled, killed, watched until it has exited. */
public interface EngineContainer {
    /** SIGTERM: what the engine does with it is its own. */
    void sigterm();

    /** SIGKILL to everything the container runs. */
    void kill();

    boolean exited();

    /**
     * Whether the kubelet's readiness probe can be run against it. A fake router serves only what the operator and
     * clients ask of it, not its release's probe path, so a kubelet counts it ready as soon as it runs.
     */
    default boolean answersProbes() {
        return true;
    }
}
