package dev.ebb.operator.sandbox;

/** Whoever owns the replicas in a run: Ebb, or a plain controller that deletes Pods as a StatefulSet would. */
interface Fleet extends AutoCloseable {
    void deploy(int replicas, int grace);

    void scaleTo(int replicas);

    void rollout(String image);

    /** True once the replicas match what was last asked, all ready on the wanted image, and nothing is going away. */
    boolean settled();

    @Override
    void close();
}
