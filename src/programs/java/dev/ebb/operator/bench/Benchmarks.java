package dev.ebb.operator.bench;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.cluster.NodeDrainBench;
import dev.ebb.operator.cluster.RouterRolloutBench;
import dev.ebb.operator.sandbox.Scenario;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.awaitility.Awaitility;

/**
 * {@code make bench}: measures what docs/contributing/benchmarks.md quotes and prints it. Not a test: nothing here passes or fails,
 * the numbers are the output.
 */
public final class Benchmarks {
    private static final int IDLE_SCALE_DOWNS = 10;

    private Benchmarks() {}

    /** A measurement that prints its own figures. */
    @FunctionalInterface
    interface Benchmark {
        void run() throws Exception;
    }

    /**
     * What every benchmark's main does, {@code make bench} or one on its own ({@code -Dexec.mainClass=...}): quiet
     * logs, so the figures stand out, and an exit that does not wait for the test world's non-daemon threads.
     */
    static void runAndExit(Benchmark benchmark) throws Exception {
        Scenario.quietLogs();
        benchmark.run();
        System.exit(0);
    }

    public static void main(String[] args) throws Exception {
        runAndExit(() -> {
            System.out.printf(
                    Locale.ROOT,
                    "Ebb benchmarks on %d cores, Java %s, machine load average %.2f at the start%n%n",
                    Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"),
                    ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
            ObjectSizes.run();
            IdleHookReturn.measure().print();
            MemberReads.run();
            idleScaleDown();
            UnroutedIdleScaleDown.run();
            ConcurrentReads.measure().print();
            for (OperatorAtScale.Shape shape : OperatorAtScale.SHAPES) {
                OperatorAtScale.measure(shape).print();
            }
            RemovalComparison.run();
            RouterComparison.run();
            RouterRolloutBench.run();
            NodeDrainBench.run();
            OperatorProcess.run();
        });
    }

    /**
     * Time from a replicas reduction to the deletion of the idle replica it takes away, through the whole protocol
     * (withdrawal, two idle reads a second apart, the UID-guarded delete), and on to the Pod being gone.
     */
    private static void idleScaleDown() {
        KubernetesMockServer server = SimApiServer.startServer();
        KubernetesClient client = server.createClient();
        SimRouterAddress routers = new SimRouterAddress();
        List<FakeRouter> fakeRouters = new ArrayList<>();
        List<Double> toDelete = new ArrayList<>();
        List<Double> toGone = new ArrayList<>();
        try (SimWorld world = new SimWorld(client);
                LocalExec exec = new LocalExec();
                SimOperator operator = new SimOperator(client, exec, routers)) {
            for (int i = 0; i < IDLE_SCALE_DOWNS; i++) {
                String ns = "bench-" + i;
                FakeRouter router = FakeRouter.inFrontOf(client, ns, "qwen", RouterKind.LLM_D_ROUTER);
                fakeRouters.add(router);
                routers.put(ns, "qwen", RouterKind.LLM_D_ROUTER, router);
                client.resource(Specs.deployment("qwen", "vLLM")
                                .namespace(ns)
                                .router("llm-d-router")
                                .role(Specs.role("server").replicas(2))
                                .build())
                        .create();
            }
            for (int i = 0; i < IDLE_SCALE_DOWNS; i++) {
                String ns = "bench-" + i;
                FakeRouter router = fakeRouters.get(i);
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> router.selects("qwen-server-r1-m0"));
                Instant reduced = Instant.now();
                Specs.scale(client, ns, "qwen", "server", 1);
                Awaitility.await()
                        .atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> {
                            Pod pod = client.pods()
                                    .inNamespace(ns)
                                    .withName("qwen-server-r1-m0")
                                    .get();
                            return pod == null || pod.getMetadata().getDeletionTimestamp() != null;
                        });
                toDelete.add(Duration.between(reduced, Instant.now()).toMillis() / 1000.0);
                Awaitility.await()
                        .atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> client.pods()
                                        .inNamespace(ns)
                                        .withName("qwen-server-r1-m0")
                                        .get()
                                == null);
                toGone.add(Duration.between(reduced, Instant.now()).toMillis() / 1000.0);
            }
        } finally {
            fakeRouters.forEach(FakeRouter::close);
            client.close();
            server.destroy();
        }
        System.out.printf(
                Locale.ROOT,
                "Idle replica, replicas 2 -> 1 under the retirement protocol, %d runs%n",
                IDLE_SCALE_DOWNS);
        Columns.header();
        Columns.row("reduction to delete issued (s)", toDelete);
        Columns.row("reduction to Pod gone (s)", toGone);
        System.out.println();
    }
}
