package dev.ebb.operator.bench;

import dev.ebb.operator.Specs;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.awaitility.Awaitility;

/**
 * An idle replica of a role without a router, from the reduction of {@code replicas} to the DELETE of its Pod: the
 * withdrawal until no EndpointSlice lists it, the endpoint propagation margin, then two passes that each read the
 * gauges and the member's connection table a second apart. Each run has a deployment of its own, all set up first.
 */
public final class UnroutedIdleScaleDown {
    private static final int RUNS = 10;
    private static final String LEAVING = "qwen-server-r1-m0";
    private static final Duration AT_MOST = Duration.ofSeconds(60);

    private UnroutedIdleScaleDown() {}

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(UnroutedIdleScaleDown::run);
    }

    public static void run() {
        KubernetesMockServer server = SimApiServer.startServer();
        KubernetesClient client = server.createClient();
        List<Double> toDelete = new ArrayList<>();
        try (SimWorld world = new SimWorld(client);
                LocalExec exec = new LocalExec();
                SimOperator operator = new SimOperator(client, exec, new SimRouterAddress())) {
            for (int i = 0; i < RUNS; i++) {
                client.resource(Specs.deployment("qwen", "vLLM")
                                .namespace(namespace(i))
                                .role(Specs.role("server").replicas(2))
                                .build())
                        .create();
            }
            for (int i = 0; i < RUNS; i++) {
                String ns = namespace(i);
                Awaitility.await().atMost(AT_MOST).until(() -> readyEndpoints(world, ns) == 2);
                long reduced = System.nanoTime();
                Specs.scale(client, ns, "qwen", "server", 1);
                // both replicas are idle, so the tie goes to the highest ordinal
                Awaitility.await()
                        .atMost(AT_MOST)
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> {
                            Pod pod = client.pods()
                                    .inNamespace(ns)
                                    .withName(LEAVING)
                                    .get();
                            return pod == null || pod.getMetadata().getDeletionTimestamp() != null;
                        });
                toDelete.add((System.nanoTime() - reduced) / 1e9);
            }
        } finally {
            client.close();
            server.destroy();
        }
        List<Double> sorted = toDelete.stream().sorted().toList();
        System.out.printf(
                Locale.ROOT,
                "idle replica without a router, reduction to its Pod's delete: median %.2f s (min %.2f, max %.2f, %d runs)%n%n",
                Columns.median(sorted),
                sorted.get(0),
                sorted.get(RUNS - 1),
                RUNS);
    }

    private static String namespace(int run) {
        return "unrouted-" + run;
    }

    private static long readyEndpoints(SimWorld world, String ns) {
        return world.endpoints().slicesOf(ns, Names.roleService("qwen", "server")).stream()
                .filter(slice -> slice.getEndpoints() != null)
                .flatMap(slice -> slice.getEndpoints().stream())
                .filter(e -> Boolean.TRUE.equals(e.getConditions().getReady()))
                .count();
    }
}
