package dev.ebb.operator.bench;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.reconcile.StatusAggregator;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetricsV2;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The operator's throughput from nothing to 500 deployments of four replicas each, all in the test world: the mock
 * API server, the simulated kubelet with a fake engine per Pod, the endpoints controller and the operator share
 * this JVM and its cores. The mock API server answers every request on one thread and scans its whole store for
 * each, so at this size its latency is part of every figure: the create latencies show how much.
 */
public final class ReconcileThroughput {
    private static final int DEPLOYMENTS = 500;
    private static final int REPLICAS = 4;
    private static final int NAMESPACES = 10;
    private static final String ROLE = "server";
    /** Far beyond what convergence takes here; it only makes sure the benchmark ends if it never comes. */
    private static final Duration CONVERGENCE_BOUND = Duration.ofMinutes(15);
    private static final Duration HEAP_SAMPLE_INTERVAL = Duration.ofMillis(100);
    private static final Duration POLL = Duration.ofMillis(100);
    private static final double MIB = 1024 * 1024;
    /** How the Java Operator SDK names the threads that run reconcile calls. */
    private static final String RECONCILER_THREADS = "ReconcilerExecutor-";

    public record Figures(Convergence convergence, Reconciliations reconciliations, Heap heap) {
        public void print() {
            System.out.printf(Locale.ROOT, "Reconcile throughput: %d ModelDeployments (vLLM, role %s, replicas %d, size 1) over %d namespaces, "
                    + "%d Pods, each backed by a fake engine; the whole test world in this JVM%n", DEPLOYMENTS, ROLE, REPLICAS, NAMESPACES,
                    DEPLOYMENTS * REPLICAS);
            if (convergence.converged() < DEPLOYMENTS) {
                System.out.printf(Locale.ROOT, "  NOT CONVERGED: %d of %d within %d s%n", convergence.converged(), DEPLOYMENTS,
                        CONVERGENCE_BOUND.toSeconds());
            }
            Columns.header();
            Columns.row("each create request (ms)", convergence.createMillis());
            if (!convergence.perDeploymentSeconds().isEmpty()) {
                Columns.row("each deployment, create to converged (s)", convergence.perDeploymentSeconds());
            }
            Columns.line("all creates issued (s)", String.format(Locale.ROOT, "%.2f", convergence.createSeconds()));
            Columns.line("first create to all converged (s)", String.format(Locale.ROOT, "%.2f", convergence.allConvergedSeconds()));
            Columns.line("reconciliations (SDK's execution timer)", String.format(Locale.ROOT, "%d, %.1f/s, %d failed, mean %.1f ms, %.1f s in all",
                    reconciliations.count(), reconciliations.count() / convergence.allConvergedSeconds(), reconciliations.failed(),
                    reconciliations.meanMillis(), reconciliations.busySeconds()));
            Columns.line("peak heap used, sampled every 100 ms", String.format(Locale.ROOT,
                    "%.0f MiB (whole JVM: Maven, test world, operator, garbage)", heap.peakMiB()));
            Columns.line("live heap after System.gc()", String.format(Locale.ROOT,
                    "%.0f MiB before, %.0f MiB converged, %.0f MiB with the operator stopped", heap.baselineLiveMiB(),
                    heap.convergedLiveMiB(), heap.withoutOperatorLiveMiB()));
            Columns.line("so, roughly, the operator holds", String.format(Locale.ROOT, "%.0f MiB, the test world %.0f MiB",
                    heap.convergedLiveMiB() - heap.withoutOperatorLiveMiB(), heap.withoutOperatorLiveMiB() - heap.baselineLiveMiB()));
            System.out.println();
        }
    }

    /**
     * @param createMillis each create request, sent one after another as a bulk apply would
     * @param allConvergedSeconds the first create to the last deployment seen converged, or to the bound if some never were
     * @param perDeploymentSeconds each converged deployment's own create to its first converged status
     */
    public record Convergence(int converged, List<Double> createMillis, double createSeconds, double allConvergedSeconds,
            List<Double> perDeploymentSeconds) {
    }

    /** Counted until every deployment converged; {@code busySeconds} is the time reconcile calls took, summed. */
    public record Reconciliations(long count, long failed, double meanMillis, double busySeconds) {
    }

    /**
     * @param peakMiB the highest heap use sampled while the world ran: everything in the JVM, garbage included
     * @param baselineLiveMiB live heap before the test world started (the Maven JVM and anything run before)
     * @param convergedLiveMiB live heap with every deployment converged, the operator running
     * @param withoutOperatorLiveMiB live heap once the operator has stopped and been let go, the test world still holding every object
     */
    public record Heap(double peakMiB, double baselineLiveMiB, double convergedLiveMiB, double withoutOperatorLiveMiB) {
    }

    /** What the operator's part of the run established, taken before the operator stops. */
    private record OperatorRun(Convergence convergence, Reconciliations reconciliations, double liveMiB) {
    }

    private ReconcileThroughput() {
    }

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(() -> measure().print());
    }

    public static Figures measure() {
        double baseline = liveHeapMiB();
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        AtomicLong peakBytes = new AtomicLong();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("heap-sampler"));
        sampler.scheduleAtFixedRate(() -> peakBytes.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max),
                0, HEAP_SAMPLE_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        KubernetesMockServer server = SimApiServer.startServer();
        KubernetesClient client = server.createClient();
        try (SimWorld world = new SimWorld(client); LocalExec exec = new LocalExec()) {
            OperatorRun run = converge(client, exec);
            // the operator is out of scope once converge returns
            awaitReconcilersEnded();
            double withoutOperator = liveHeapMiB();
            return new Figures(run.convergence(), run.reconciliations(),
                    new Heap(peakBytes.get() / MIB, baseline, run.liveMiB(), withoutOperator));
        } finally {
            sampler.shutdownNow();
            client.close();
            server.destroy();
        }
    }

    private static OperatorRun converge(KubernetesClient client, LocalExec exec) {
        Map<String, Long> createdAt = new ConcurrentHashMap<>();
        Map<String, Long> convergedAt = new ConcurrentHashMap<>();
        List<Double> createMillis = new ArrayList<>();
        try (SimOperator operator = new SimOperator(client, exec, new SimRouterAddress())) {
            long first = System.nanoTime();
            double createSeconds;
            try (SharedIndexInformer<ModelDeployment> watch = client.resources(ModelDeployment.class).inAnyNamespace()
                    .inform(whenConverged(convergedAt))) {
                for (int i = 0; i < DEPLOYMENTS; i++) {
                    ModelDeployment md = Specs.deployment(String.format(Locale.ROOT, "qwen-%03d", i), "vLLM")
                            .namespace("bench-" + i % NAMESPACES).role(Specs.role(ROLE).replicas(REPLICAS).size(1)).build();
                    long sent = System.nanoTime();
                    createdAt.put(key(md), sent);
                    client.resource(md).create();
                    createMillis.add((System.nanoTime() - sent) / 1e6);
                }
                createSeconds = secondsBetween(first, System.nanoTime());
                awaitConvergence(convergedAt);
            }
            long last = convergedAt.size() == DEPLOYMENTS ? convergedAt.values().stream().max(Long::compare).orElseThrow() : System.nanoTime();
            List<Double> perDeployment = convergedAt.entrySet().stream()
                    .map(e -> secondsBetween(createdAt.get(e.getKey()), e.getValue())).toList();
            return new OperatorRun(new Convergence(convergedAt.size(), createMillis, createSeconds, secondsBetween(first, last), perDeployment),
                    reconciliations(operator.registry()), liveHeapMiB());
        }
    }

    private static Reconciliations reconciliations(MeterRegistry registry) {
        long failed = (long) registry.find(MicrometerMetricsV2.RECONCILIATIONS_FAILED).counters().stream().mapToDouble(Counter::count).sum();
        Timer executions = registry.find(MicrometerMetricsV2.RECONCILIATION_EXECUTION_DURATION).timer();
        return executions == null ? new Reconciliations(0, failed, 0, 0)
                : new Reconciliations(executions.count(), failed, executions.mean(TimeUnit.MILLISECONDS), executions.totalTime(TimeUnit.SECONDS));
    }

    /** Waits until every deployment has converged or the bound has passed; the figures then say how many did. */
    private static void awaitConvergence(Map<String, Long> convergedAt) {
        try {
            Awaitility.await().atMost(CONVERGENCE_BOUND).pollInterval(POLL).until(() -> convergedAt.size() == DEPLOYMENTS);
        } catch (ConditionTimeoutException e) {
            // not an error here: a benchmark reports what it saw
        }
    }

    /** Notes when each deployment is first seen converged; the watch's own clock, not the poll's, dates it. */
    private static ResourceEventHandler<ModelDeployment> whenConverged(Map<String, Long> convergedAt) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(ModelDeployment md) {
                note(md);
            }

            @Override
            public void onUpdate(ModelDeployment old, ModelDeployment md) {
                note(md);
            }

            @Override
            public void onDelete(ModelDeployment md, boolean unknown) {
            }

            private void note(ModelDeployment md) {
                if (converged(md)) {
                    convergedAt.putIfAbsent(key(md), System.nanoTime());
                }
            }
        };
    }

    /** Status speaks for the current spec, and the role has every replica there, ready and at its configuration. */
    static boolean converged(ModelDeployment md) {
        ModelDeploymentStatus status = md.getStatus();
        long generation = Optional.ofNullable(md.getMetadata().getGeneration()).orElse(0L);
        return status != null && Long.valueOf(generation).equals(status.observedGeneration())
                && StatusAggregator.PHASE_READY.equals(status.phase())
                && status.roles() != null && status.roles().stream().anyMatch(r -> r.name().equals(ROLE)
                        && r.desired() == REPLICAS && r.current() == REPLICAS && r.ready() == REPLICAS && r.updated() == REPLICAS);
    }

    private static String key(ModelDeployment md) {
        return md.getMetadata().getNamespace() + "/" + md.getMetadata().getName();
    }

    private static double secondsBetween(long startNanos, long endNanos) {
        return (endNanos - startNanos) / 1e9;
    }

    /** What a reconcile call still under way at the stop holds stays reachable until its thread has ended. */
    private static void awaitReconcilersEnded() {
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(POLL).until(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith(RECONCILER_THREADS)));
    }

    /** Heap in use right after a full collection: what is still reachable. */
    private static double liveHeapMiB() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / MIB;
    }
}
