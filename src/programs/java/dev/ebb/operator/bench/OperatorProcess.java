package dev.ebb.operator.bench;

import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;

/**
 * The packaged JVM operator as a process, started as its image starts it ({@code java @jvm.options -jar
 * quarkus-run.jar}, prod profile, leader election on) against the test world's API server with no ModelDeployments:
 * how long it takes to be ready, what it holds in memory when idle, and how long a SIGTERM takes to stop it. Several
 * starts, one after another, each a fresh process.
 */
public final class OperatorProcess {
    private static final Path LOG = Path.of("target", "bench-operator.log");
    private static final Duration IDLE = Duration.ofSeconds(20);
    private static final int RUNS = 5;
    private static final Pattern STARTED = Pattern.compile("started in ([0-9.]+)s");
    private static final double NOT_MEASURED = Double.NaN;

    private record Run(double readySeconds, double ownStartSeconds, double residentMiB, double stopSeconds) {}

    private OperatorProcess() {}

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(OperatorProcess::run);
    }

    static void run() throws Exception {
        List<Run> runs = new ArrayList<>();
        for (int i = 0; i < RUNS; i++) {
            runs.add(once());
        }
        System.out.printf(
                Locale.ROOT,
                "The packaged JVM operator (the image's JVM flags, prod profile, leader election on), no ModelDeployments, "
                        + "%d starts%n",
                RUNS);
        Columns.header();
        Columns.row(
                "launch to readiness UP (s)",
                runs.stream().map(Run::readySeconds).toList());
        Columns.row(
                "the same, Quarkus' own 'started in' (s)",
                measured(runs.stream().map(Run::ownStartSeconds).toList()));
        Columns.row(
                "resident set after " + IDLE.toSeconds() + " s idle (MiB)",
                measured(runs.stream().map(Run::residentMiB).toList()));
        Columns.row(
                "SIGTERM to exit, "
                        + PackagedOperator.packagedDuration(PackagedOperator.SHUTDOWN_DELAY)
                                .toSeconds() + " s delay incl. (s)",
                measured(runs.stream().map(Run::stopSeconds).toList()));
        System.out.println();
    }

    /** What was measured; a figure none of the runs could take (no /proc, no log line) shows as NaN. */
    private static List<Double> measured(List<Double> values) {
        List<Double> taken = values.stream().filter(v -> !Double.isNaN(v)).toList();
        return taken.isEmpty() ? List.of(NOT_MEASURED) : taken;
    }

    private static Run once() throws Exception {
        KubernetesMockServer server = SimApiServer.startServer(PackagedOperator.packagedRules());
        try (KubernetesClient client = server.createClient()) {
            client.resource(SimApiServer.generatedCrd()).create();
            long launched = System.nanoTime();
            try (PackagedOperator operator = PackagedOperator.start(client, "bench", LOG)) {
                Awaitility.await()
                        .atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> operator.status("/q/health/ready") == 200);
                double ready = (System.nanoTime() - launched) / 1e9;
                Thread.sleep(IDLE.toMillis());
                // logged once start-up is complete, a little after the HTTP server answers
                Matcher started = STARTED.matcher(operator.log());
                double ownStart = started.find() ? Double.parseDouble(started.group(1)) : NOT_MEASURED;
                double resident = operator.residentKiB().stream()
                        .mapToDouble(kib -> kib / 1024.0)
                        .findFirst()
                        .orElse(NOT_MEASURED);
                long signalled = System.nanoTime();
                operator.process().destroy();
                boolean exited = operator.process().waitFor(60, TimeUnit.SECONDS);
                double stopped = exited ? (System.nanoTime() - signalled) / 1e9 : NOT_MEASURED;
                return new Run(ready, ownStart, resident, stopped);
            }
        } finally {
            server.destroy();
        }
    }
}
