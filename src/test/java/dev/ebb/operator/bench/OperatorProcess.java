package dev.ebb.operator.bench;

import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;

/**
 * The packaged JVM operator as a process: how long it takes to be ready, what it holds in memory when idle, and how
 * long a SIGTERM takes to stop it, against the test world's API server.
 */
public final class OperatorProcess {
    private static final Path LOG = Path.of("target", "bench-operator.log");
    private static final Duration IDLE = Duration.ofSeconds(20);
    private static final Pattern STARTED = Pattern.compile("started in ([0-9.]+)s");

    private OperatorProcess() {
    }

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(OperatorProcess::run);
    }

    static void run() throws Exception {
        KubernetesMockServer server = SimApiServer.startServer(PackagedOperator.packagedRules());
        try (KubernetesClient client = server.createClient()) {
            client.resource(SimApiServer.generatedCrd()).create();
            long launched = System.nanoTime();
            try (PackagedOperator operator = PackagedOperator.start(client, "bench", LOG)) {
                Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(50))
                        .until(() -> operator.status("/q/health/ready") == 200);
                double ready = (System.nanoTime() - launched) / 1e9;
                Thread.sleep(IDLE.toMillis());
                // logged once start-up is complete, a little after the HTTP server answers
                Matcher started = STARTED.matcher(operator.log());
                String ownFigure = started.find() ? started.group(1) + " s" : "not logged";
                OptionalLong rss = operator.residentKiB();
                long signalled = System.nanoTime();
                operator.process().destroy();
                boolean exited = operator.process().waitFor(60, TimeUnit.SECONDS);
                double stopped = (System.nanoTime() - signalled) / 1e9;
                System.out.println("The packaged JVM operator (prod profile, leader election on), no ModelDeployments");
                System.out.printf(Locale.ROOT, "  %-46s %8.2f s (Quarkus' own figure: %s)%n", "launch to readiness UP", ready, ownFigure);
                System.out.printf(Locale.ROOT, "  %-46s %8s%n", "resident set after " + IDLE.toSeconds() + " s idle",
                        rss.isPresent() ? String.format(Locale.ROOT, "%.0f MiB", rss.getAsLong() / 1024.0) : "unknown (no /proc)");
                System.out.printf(Locale.ROOT, "  %-46s %8s%n", "SIGTERM to exit (shutdown delay "
                        + PackagedOperator.packagedDuration(PackagedOperator.SHUTDOWN_DELAY).toSeconds() + " s included)",
                        exited ? String.format(Locale.ROOT, "%.2f s", stopped) : "did not exit in 60 s");
                System.out.println();
            }
        } finally {
            server.destroy();
        }
    }
}
