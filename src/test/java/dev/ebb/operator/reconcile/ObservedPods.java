package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.List;

/** Pods as the API server would return them after the operator created them, for planner and status tests. */
final class ObservedPods {
    private static final PodRenderer RENDERER = new PodRenderer();

    private ObservedPods() {}

    static List<Pod> replica(DesiredDeployment deployment, String role, int ordinal, String hash, boolean ready) {
        return replica(RENDERER, deployment, role, ordinal, hash, ready);
    }

    /** The replica as the operator build that {@code renderer} stands for created it. */
    static List<Pod> replica(
            PodRenderer renderer, DesiredDeployment deployment, String role, int ordinal, String hash, boolean ready) {
        DesiredRole desiredRole = deployment.roles().stream()
                .filter(r -> r.name().equals(role))
                .findFirst()
                .orElseThrow();
        List<Pod> pods = new ArrayList<>();
        for (int member = 0; member < desiredRole.size(); member++) {
            pods.add(withReady(renderer.render(new MemberSlot(deployment, desiredRole, ordinal, member), hash), ready));
        }
        return pods;
    }

    /** A Pod whose engine container started (it has a container ID), ready or not. */
    static Pod withReady(Pod pod, boolean ready) {
        return new PodBuilder(pod)
                .withNewStatus()
                .withPhase("Running")
                .addNewCondition()
                .withType("Ready")
                .withStatus(ready ? "True" : "False")
                .endCondition()
                .addNewContainerStatus()
                .withName("main")
                .withContainerID("containerd://" + pod.getMetadata().getName())
                .withRestartCount(0)
                .withReady(ready)
                .endContainerStatus()
                .endStatus()
                .build();
    }
}
