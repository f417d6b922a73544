package dev.ebb.operator.drain;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.v1alpha1.RetirementSpec;

/**
 * The window of a leaving router Pod, in seconds from its deletion. Every stream of a deployment with a router passes
 * through one of its Pods, so a router Pod that leaves (a rollout, a lowered router.replicas, an eviction) must carry
 * its streams as long as the engines behind it would: the window is sized from the longest drain budget of the roles
 * unless spec.router sets its own. Pure.
 *
 * @param settle the Pod serves on undisturbed this long, while the router Service's endpoints drop it
 * @param drain after the settle, how long the Pod's streams may run on to their end
 * @param grace the Pod's terminationGracePeriodSeconds: the settle, the drain and the router's exit
 */
public record RouterDrain(int settle, int drain, int grace) {
    /**
     * Kept free after the drain for the router's processes to stop before the kill: a process exit, and the endpoint
     * picker's gRPC GracefulStop once its Envoy has gone.
     */
    public static final int EXIT = 5;

    public static RouterDrain of(DesiredDeployment deployment) {
        int drain = deployment.router().flatMap(DesiredRouter::drainSeconds).orElseGet(() -> longestBudget(deployment));
        return new RouterDrain(DrainTimelines.SETTLE, drain, DrainTimelines.SETTLE + drain + EXIT);
    }

    /** How long after the deletion the Pod may still take a new stream: until its settle and drain have passed. */
    public int lastStreamBy() {
        return settle + drain;
    }

    private static int longestBudget(DesiredDeployment deployment) {
        return deployment.roles().stream()
                .mapToInt(role -> (int) role.drainBudget().toSeconds())
                .max()
                .orElse(RetirementSpec.DEFAULT_DRAIN_SECONDS);
    }
}
