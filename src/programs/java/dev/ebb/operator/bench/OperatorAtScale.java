package dev.ebb.operator.bench;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.read.PrometheusText;
import dev.ebb.operator.reconcile.StatusAggregator;
import dev.ebb.operator.sim.EveryState;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The operator at scale, measured on the operator's side: the packaged JVM operator runs as its own process, with the
 * flags of its image, against the test world in this JVM (the mock API server, the simulated kubelet with a fake
 * engine per Pod, the endpoints controller). Its CPU time and resident set are read from the kernel for its process
 * alone, so the mock API server's own work (one thread, a scan of its whole store per request) counts only in
 * this JVM's figure, printed beside it.
 */
public final class OperatorAtScale {
    private static final int NAMESPACES = 10;
    private static final String ROLE = "server";
    /** Far beyond what convergence takes here; it only makes sure the benchmark ends if it never comes. */
    private static final Duration CONVERGENCE_BOUND = Duration.ofMinutes(15);
    /** How long the converged operator is left alone before its resident set is read again. */
    private static final Duration SETTLE = Duration.ofSeconds(20);

    private static final Duration POLL = Duration.ofMillis(100);
    private static final double MIB = 1024;
    private static final String EXECUTIONS_BUCKET = "reconciliations_execution_duration_seconds_bucket";
    private static final String EXECUTIONS_COUNT = "reconciliations_execution_duration_seconds_count";
    private static final String FAILURES = "reconciliations_failure_total";
    private static final List<Double> PERCENTILES = List.of(0.50, 0.90, 0.99);

    /** How many ModelDeployments, each with one role of this many single-Pod replicas. */
    public record Shape(int deployments, int replicas) {
        /** As given on the command line: {@code 500x4}. */
        static Shape parse(String given) {
            String[] parts = given.split("x", 2);
            return new Shape(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
        }

        int pods() {
            return deployments * replicas;
        }
    }

    public static final List<Shape> SHAPES = List.of(new Shape(500, 4), new Shape(2000, 1));

    /**
     * @param converged how many deployments converged within the bound
     * @param createSeconds the creates, sent one after another as a bulk apply would
     * @param allConvergedSeconds the first create to the last deployment seen converged (or to the bound)
     * @param perDeploymentSeconds each converged deployment's own create to its first converged status
     * @param operatorCpuSeconds the operator process's CPU time (user and system, all threads) over that span
     * @param operatorCpuByThreads the same by the threads that used it, as far as they were still alive at the end
     * @param worldCpuSeconds this JVM's CPU time over the same span: the mock API server, kubelet, engines and creates
     * @param reconciliations reconcile calls the operator counted over that span, and how many failed
     * @param percentileBounds for each percentile of the reconcile calls' own duration, the upper bound of the
     *        operator's histogram bucket it falls in (the SDK's buckets, in seconds)
     * @param residentConvergedMiB the operator's resident set when the last deployment converged
     * @param residentSettledMiB the same after {@link #SETTLE} with nothing changing
     * @param residentPeakMiB the highest resident set the kernel saw for the process (VmHWM)
     */
    public record Figures(
            Shape shape,
            int converged,
            double createSeconds,
            double allConvergedSeconds,
            List<Double> perDeploymentSeconds,
            double operatorCpuSeconds,
            Map<String, Double> operatorCpuByThreads,
            double worldCpuSeconds,
            long reconciliations,
            long failed,
            Map<Double, String> percentileBounds,
            double residentConvergedMiB,
            double residentSettledMiB,
            double residentPeakMiB) {
        public void print() {
            System.out.printf(
                    Locale.ROOT,
                    "The packaged operator at scale: %d ModelDeployments (vLLM, one role of %d single-Pod replicas) over %d "
                            + "namespaces, %d Pods each backed by a fake engine; the operator its own process with the image's JVM flags%n",
                    shape.deployments(),
                    shape.replicas(),
                    NAMESPACES,
                    shape.pods());
            if (converged < shape.deployments()) {
                System.out.printf(
                        Locale.ROOT,
                        "  NOT CONVERGED: %d of %d within %d s%n",
                        converged,
                        shape.deployments(),
                        CONVERGENCE_BOUND.toSeconds());
            }
            if (!perDeploymentSeconds.isEmpty()) {
                Columns.header();
                Columns.row("each deployment, create to converged (s)", perDeploymentSeconds);
            }
            Columns.line("all creates sent, one after another", String.format(Locale.ROOT, "%.1f s", createSeconds));
            Columns.line("first create to all converged", String.format(Locale.ROOT, "%.1f s", allConvergedSeconds));
            Columns.line(
                    "operator's CPU over that span",
                    String.format(
                            Locale.ROOT,
                            "%.1f s (%.1f ms per deployment)",
                            operatorCpuSeconds,
                            operatorCpuSeconds * 1000 / shape.deployments()));
            operatorCpuByThreads.forEach(
                    (group, cpu) -> Columns.line("  of which " + group, String.format(Locale.ROOT, "%.1f s", cpu)));
            Columns.line(
                    "test world's CPU over that span",
                    String.format(
                            Locale.ROOT,
                            "%.1f s (this JVM: mock API server, kubelet, engines, creates)",
                            worldCpuSeconds));
            Columns.line(
                    "reconcile calls over that span",
                    String.format(
                            Locale.ROOT,
                            "%d, %d failed, %.1f ms of operator CPU per call",
                            reconciliations,
                            failed,
                            reconciliations == 0 ? 0 : operatorCpuSeconds * 1000 / reconciliations));
            Columns.line(
                    "reconcile call, wall time (its waits on the mock API server included), SDK bucket bound",
                    percentileBounds.entrySet().stream()
                            .map(e -> String.format(Locale.ROOT, "p%.0f <= %s", e.getKey() * 100, e.getValue()))
                            .reduce((a, b) -> a + ", " + b)
                            .orElse("none"));
            Columns.line(
                    "operator's resident set",
                    String.format(
                            Locale.ROOT,
                            "%.0f MiB converged, %.0f MiB %d s later, %.0f MiB peak",
                            residentConvergedMiB,
                            residentSettledMiB,
                            SETTLE.toSeconds(),
                            residentPeakMiB));
            System.out.println();
        }
    }

    private OperatorAtScale() {}

    public static void main(String[] args) throws Exception {
        List<Shape> shapes =
                args.length == 0 ? SHAPES : Stream.of(args).map(Shape::parse).toList();
        Benchmarks.runAndExit(() -> {
            for (Shape shape : shapes) {
                measure(shape).print();
            }
        });
    }

    public static Figures measure(Shape shape) throws Exception {
        KubernetesMockServer server = SimApiServer.startServer(PackagedOperator.packagedRules());
        KubernetesClient client = server.createClient();
        client.resource(SimApiServer.generatedCrd()).create();
        Path log = Path.of("target", "bench-operator-at-scale-" + shape.deployments() + ".log");
        try (SimWorld world = new SimWorld(client);
                PackagedOperator operator = PackagedOperator.start(client, "bench-scale", log)) {
            Awaitility.await()
                    .atMost(Duration.ofMinutes(2))
                    .pollInterval(POLL)
                    .until(() -> operator.status("/q/health/ready") == 200);
            Figures figures = converge(shape, client, operator);
            // a SIGTERM as its Deployment would send, so that it stops as it would there
            operator.process().destroy();
            operator.process().waitFor(1, TimeUnit.MINUTES);
            return figures;
        } finally {
            client.close();
            server.destroy();
        }
    }

    private static Figures converge(Shape shape, KubernetesClient client, PackagedOperator operator) throws Exception {
        Map<String, Long> createdAt = new ConcurrentHashMap<>();
        Map<String, Long> convergedAt = new ConcurrentHashMap<>();
        String metricsBefore = operator.body("/q/metrics");
        Duration operatorCpuBefore = operator.cpu();
        Map<String, Long> threadsBefore = operator.cpuTicksByThread();
        Duration worldCpuBefore = ownCpu();
        long first = System.nanoTime();
        double createSeconds;
        try (SharedIndexInformer<ModelDeployment> watch =
                client.resources(ModelDeployment.class).inAnyNamespace().inform(whenConverged(shape, convergedAt))) {
            for (int i = 0; i < shape.deployments(); i++) {
                ModelDeployment md = Specs.deployment(String.format(Locale.ROOT, "qwen-%04d", i), "vLLM")
                        .namespace("bench-" + i % NAMESPACES)
                        .role(Specs.role(ROLE).replicas(shape.replicas()).size(1))
                        .build();
                createdAt.put(key(md), System.nanoTime());
                client.resource(md).create();
            }
            createSeconds = secondsBetween(first, System.nanoTime());
            awaitConvergence(shape, convergedAt);
        }
        double operatorCpu = seconds(operator.cpu().minus(operatorCpuBefore));
        Map<String, Double> byThreads = cpuByThreadGroup(threadsBefore, operator.cpuTicksByThread());
        double worldCpu = seconds(ownCpu().minus(worldCpuBefore));
        String metricsConverged = operator.body("/q/metrics");
        double residentConverged = operator.residentKiB().orElse(0) / MIB;
        long last = convergedAt.size() == shape.deployments()
                ? convergedAt.values().stream().max(Long::compare).orElseThrow()
                : System.nanoTime();
        List<Double> perDeployment = convergedAt.entrySet().stream()
                .map(e -> secondsBetween(createdAt.get(e.getKey()), e.getValue()))
                .toList();
        Thread.sleep(SETTLE.toMillis());
        double residentSettled = operator.residentKiB().orElse(0) / MIB;
        double residentPeak = operator.residentPeakKiB().orElse(0) / MIB;
        return new Figures(
                shape,
                convergedAt.size(),
                createSeconds,
                secondsBetween(first, last),
                perDeployment,
                operatorCpu,
                byThreads,
                worldCpu,
                Math.round(sum(metricsConverged, EXECUTIONS_COUNT) - sum(metricsBefore, EXECUTIONS_COUNT)),
                Math.round(sum(metricsConverged, FAILURES) - sum(metricsBefore, FAILURES)),
                percentileBounds(metricsBefore, metricsConverged),
                residentConverged,
                residentSettled,
                residentPeak);
    }

    /** The kernel's clock ticks per second for a thread's CPU time (USER_HZ, 100 on Linux whatever the kernel's own rate). */
    private static final double TICKS_PER_SECOND = 100;
    /** Threads by what they do, from the names the JVM, Vert.x and the SDK give them. */
    private static final List<Map.Entry<String, String>> THREAD_GROUPS = List.of(
            Map.entry("pool-", "reconcile calls (the SDK's executor)"),
            Map.entry("vert.x-eventloo", "watch events and API answers (Vert.x event loops)"),
            Map.entry("C1 CompilerThre", "JIT compilation"),
            Map.entry("VM Thread", "garbage collection and safepoints"));

    private static Map<String, Double> cpuByThreadGroup(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Double> groups = new LinkedHashMap<>();
        THREAD_GROUPS.forEach(group -> groups.put(group.getValue(), 0.0));
        groups.put("everything else", 0.0);
        after.forEach((thread, ticks) -> {
            String name = thread.substring(thread.indexOf(' ') + 1);
            String group = THREAD_GROUPS.stream()
                    .filter(g -> name.startsWith(g.getKey()))
                    .map(Map.Entry::getValue)
                    .findFirst()
                    .orElse("everything else");
            groups.merge(group, (ticks - before.getOrDefault(thread, 0L)) / TICKS_PER_SECOND, Double::sum);
        });
        return groups;
    }

    private static double sum(String page, String metric) {
        return PrometheusText.byLabel(page, metric, "controller_name")
                .map(m -> m.values().stream().mapToDouble(Double::doubleValue).sum())
                .orElse(0.0);
    }

    /**
     * Each percentile of the calls made between the two pages, as the upper bound of the cumulative bucket that first
     * holds that share of them.
     */
    static Map<Double, String> percentileBounds(String before, String after) {
        TreeMap<Double, Double> calls = new TreeMap<>();
        Map<String, Double> start =
                PrometheusText.byLabel(before, EXECUTIONS_BUCKET, "le").orElse(Map.of());
        PrometheusText.byLabel(after, EXECUTIONS_BUCKET, "le")
                .orElse(Map.of())
                .forEach((le, count) -> calls.put(
                        le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le),
                        count - start.getOrDefault(le, 0.0)));
        Map<Double, String> bounds = new TreeMap<>();
        if (calls.isEmpty() || calls.lastEntry().getValue() == 0) {
            return bounds;
        }
        double total = calls.lastEntry().getValue();
        for (double percentile : PERCENTILES) {
            calls.entrySet().stream()
                    .filter(e -> e.getValue() >= percentile * total)
                    .findFirst()
                    .ifPresent(e -> bounds.put(
                            percentile,
                            e.getKey().isInfinite()
                                    ? "above the last bucket"
                                    : String.format(Locale.ROOT, "%.0f ms", e.getKey() * 1000)));
        }
        return bounds;
    }

    /** Waits until every deployment has converged or the bound has passed; the figures then say how many did. */
    private static void awaitConvergence(Shape shape, Map<String, Long> convergedAt) {
        try {
            Awaitility.await()
                    .atMost(CONVERGENCE_BOUND)
                    .pollInterval(POLL)
                    .until(() -> convergedAt.size() == shape.deployments());
        } catch (ConditionTimeoutException e) {
            // not an error here: a benchmark reports what it saw
        }
    }

    /** Notes when each deployment is first seen converged; the watch's own clock, not the poll's, dates it. */
    private static ResourceEventHandler<ModelDeployment> whenConverged(Shape shape, Map<String, Long> convergedAt) {
        return EveryState.of(md -> {
            if (converged(md, shape.replicas())) {
                convergedAt.putIfAbsent(key(md), System.nanoTime());
            }
        });
    }

    /** Status speaks for the current spec, and the role has every replica there, ready and at its configuration. */
    static boolean converged(ModelDeployment md, int replicas) {
        ModelDeploymentStatus status = md.getStatus();
        long generation = Optional.ofNullable(md.getMetadata().getGeneration()).orElse(0L);
        return status != null
                && Long.valueOf(generation).equals(status.observedGeneration())
                && StatusAggregator.PHASE_READY.equals(status.phase())
                && status.roles() != null
                && status.roles().stream()
                        .anyMatch(r -> r.name().equals(ROLE)
                                && r.desired() == replicas
                                && r.current() == replicas
                                && r.ready() == replicas
                                && r.updated() == replicas);
    }

    private static String key(ModelDeployment md) {
        return md.getMetadata().getNamespace() + "/" + md.getMetadata().getName();
    }

    private static Duration ownCpu() {
        return ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO);
    }

    private static double seconds(Duration duration) {
        return duration.toNanos() / 1e9;
    }

    private static double secondsBetween(long startNanos, long endNanos) {
        return (endNanos - startNanos) / 1e9;
    }
}
