package dev.ebb.operator.cluster;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The router rollout benchmark on the real control plane: per router kind, a rollout and then router.replicas 2 → 1
 * under four clients of generations from 5 to 45 s, through Ebb's router Pods and through the Deployment defaults,
 * all in one run. Some generations outlast the defaults' 30 s grace, so a router that drains on SIGTERM still cuts
 * them there. Needs the control plane's binaries ({@code make cluster-binaries}).
 */
public final class RouterRolloutBench {
    private RouterRolloutBench() {}

    public static void run() throws Exception {
        System.out.println(
                "Router rollout, then router.replicas 2 -> 1, under 4 streaming clients (generations of 5 to 45 s),");
        System.out.println("real kube-apiserver, controller-manager and scheduler; both arms of every kind at once");
        if (!ControlPlaneRelease.pinned().built()) {
            System.out.println("  skipped: the control plane's binaries are not built (make cluster-binaries)");
            System.out.println();
            return;
        }
        List<RouterRollouts.Result> results;
        try (ClusterWorld world = ClusterWorld.start("router-bench", "router-bench")) {
            results = new RouterRollouts(world)
                    .run(
                            List.of(RouterKind.LLM_D_ROUTER, RouterKind.VLLM_ROUTER, RouterKind.SGLANG_GATEWAY),
                            Duration.ofSeconds(5),
                            Duration.ofSeconds(45));
        }
        System.out.printf(
                Locale.ROOT,
                "  %-15s %-20s %10s %5s %9s %12s %14s%n",
                "router",
                "router Pods",
                "completed",
                "cut",
                "rejected",
                "rollout (s)",
                "2 -> 1 (s)");
        for (RouterRollouts.Result r : results) {
            System.out.printf(
                    Locale.ROOT,
                    "  %-15s %-20s %10d %5d %9d %12.1f %14.1f%n",
                    r.kind().wireName(),
                    r.arm().label,
                    r.completed(),
                    r.cut(),
                    r.rejected(),
                    r.rollout().toMillis() / 1000.0,
                    r.scaleDown().toMillis() / 1000.0);
        }
        System.out.println(
                "  rollout and 2 -> 1: from the change to the last old router Pod gone; rejected: refused before anything streamed");
        System.out.println();
    }

    public static void main(String[] args) throws Exception {
        run();
        System.exit(0);
    }
}
