package dev.ebb.operator.packaging;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.config.EbbSettings;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.retire.Reason;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged operator, run as the process a Deployment would run (prod profile, leader election on), stopped by
 * SIGTERM in the middle of a retirement. It stops serving readiness at once while staying live, exits within its
 * shutdown budget, hands its Lease back, and leaves the retirement recorded so that the next leader finishes it.
 */
class PackagedShutdownIT {
    private static final Path LOG = Path.of("target", "packaged-shutdown-operator.log");
    private static final String NS = "team-a";
    private static final String IDENTITY = "ebb-operator-7d9f-x2x4q";
    private static final String TARGET = Names.pod("qwen", "server", 1, 0);
    /** Beyond the shutdown delay and termination timeout: the JVM's own exit. */
    private static final Duration EXIT_SLACK = Duration.ofSeconds(7);

    private static final String LEASE =
            EbbSettings.of(Map.of()).leaderElection().leaseName();

    private KubernetesMockServer server;
    private KubernetesClient client;
    private SimWorld world;
    private PackagedOperator operator;

    @BeforeEach
    void start() throws Exception {
        server = SimApiServer.startServer(PackagedOperator.packagedRules());
        client = server.createClient();
        client.resource(SimApiServer.generatedCrd()).create();
        world = new SimWorld(client);
        operator = PackagedOperator.start(client, IDENTITY, LOG);
    }

    @AfterEach
    void stop() {
        operator.close();
        world.close();
        client.close();
        server.destroy();
    }

    private Optional<String> leaseHolder() {
        Lease lease = client.leases()
                .inNamespace(PackagedOperator.NAMESPACE)
                .withName(LEASE)
                .get();
        // no holder and an empty one both mean free, to the API server's leader election as to fabric8's
        return Optional.ofNullable(lease)
                .map(l -> l.getSpec().getHolderIdentity())
                .filter(holder -> !holder.isBlank());
    }

    private int readyReplicas() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
        return md == null
                        || md.getStatus() == null
                        || md.getStatus().roles() == null
                        || md.getStatus().roles().isEmpty()
                ? 0
                : md.getStatus().roles().get(0).ready();
    }

    private Optional<RetirementStatus> retirement() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
        return Optional.ofNullable(md)
                .map(ModelDeployment::getStatus)
                .flatMap(s -> s.retirements() == null
                        ? Optional.empty()
                        : s.retirements().stream().findFirst());
    }

    @Test
    void aScrapeFindsTheSdksReconcileMetricsOnceItHasReconciled() {
        await("the operator ready")
                .atMost(Duration.ofSeconds(60))
                .until(() -> operator.status("/q/health/ready") == 200);
        client.resource(deployment("qwen", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(1))
                        .build())
                .create();
        await("the replica ready").atMost(Duration.ofSeconds(60)).until(() -> readyReplicas() == 1);

        assertThat(operator.body("/q/metrics").lines())
                .as("the prod build serves the SDK's per-controller series, not only Ebb's and the JVM's")
                .contains("# TYPE reconciliations_execution_duration_seconds histogram")
                .anyMatch(line -> line.startsWith(
                                "reconciliations_execution_duration_seconds_count{controller_name=\"modeldeployment\"}")
                        && !line.endsWith(" 0.0"));
    }

    @Test
    void sigtermStopsReadinessKeepsLivenessReleasesTheLeaseAndLeavesTheRetirementToTheNextLeader() throws Exception {
        await("the operator ready")
                .atMost(Duration.ofSeconds(60))
                .until(() -> operator.status("/q/health/ready") == 200);
        assertThat(leaseHolder()).contains(IDENTITY);
        client.resource(deployment("qwen", "vLLM")
                        .namespace(NS)
                        .router("llm-d-router")
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await("both replicas ready").atMost(Duration.ofSeconds(60)).until(() -> readyReplicas() == 2);
        Specs.scale(client, NS, "qwen", "server", 1);
        // no router answers at the router Pod's address in the test world, so this process's retirement stays held
        RetirementStatus begun = await("a retirement under way")
                .atMost(Duration.ofSeconds(30))
                .until(this::retirement, Optional::isPresent)
                .orElseThrow();

        long signalled = System.nanoTime();
        operator.process().destroy();
        await("readiness DOWN")
                .atMost(Duration.ofSeconds(2))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> operator.status("/q/health/ready") == 503);
        double readinessDownAfter = (System.nanoTime() - signalled) / 1e9;
        assertThat(operator.status("/q/health/live"))
                .as("liveness while the operator drains itself")
                .isEqualTo(200);
        Duration budget = PackagedOperator.packagedDuration(PackagedOperator.SHUTDOWN_DELAY)
                .plus(PackagedOperator.packagedDuration(PackagedOperator.TERMINATION_TIMEOUT))
                .plus(EXIT_SLACK);
        assertThat(operator.process().waitFor(budget.toMillis(), TimeUnit.MILLISECONDS))
                .as("exited within %s", budget)
                .isTrue();
        double exitedAfter = (System.nanoTime() - signalled) / 1e9;

        String log = operator.log();
        assertThat(leaseHolder())
                .as(
                        "the Lease handed back: %s",
                        client.leases()
                                .inNamespace(PackagedOperator.NAMESPACE)
                                .withName(LEASE)
                                .get())
                .isEmpty();
        assertThat(log).contains(IDENTITY + " released the Lease " + PackagedOperator.NAMESPACE + "/" + LEASE);
        assertThat(log.lines().filter(line -> line.contains(" ERROR ")))
                .as("an orderly stop logs nothing at ERROR")
                .isEmpty();
        assertThat(retirement()).as("the retirement left recorded").hasValueSatisfying(r -> {
            assertThat(r.replicaOrdinal()).isEqualTo(begun.replicaOrdinal());
            assertThat(r.startedAt()).isEqualTo(begun.startedAt());
        });
        assertThat(client.pods()
                        .inNamespace(NS)
                        .withName(TARGET)
                        .get()
                        .getMetadata()
                        .getDeletionTimestamp())
                .isNull();
        System.out.printf(
                "readiness DOWN %.2f s after SIGTERM, exited after %.2f s%n", readinessDownAfter, exitedAfter);

        SimRouterAddress routers = new SimRouterAddress();
        try (FakeRouter router = FakeRouter.inFrontOf(client, NS, "qwen", RouterKind.LLM_D_ROUTER);
                LocalExec exec = new LocalExec()) {
            routers.put(NS, "qwen", RouterKind.LLM_D_ROUTER, router);
            try (SimOperator next = new SimOperator(client, exec, routers)) {
                await("the next leader finishes it")
                        .atMost(Duration.ofSeconds(60))
                        .until(() ->
                                client.pods().inNamespace(NS).withName(TARGET).get() == null
                                        && retirement().isEmpty());
            }
        }
        List<String> starts = RecordedEvents.occurrences(client, NS).stream()
                .filter(e -> Reason.STARTED.wire().equals(e.getReason()))
                .map(e -> e.getMessage())
                .toList();
        assertThat(starts).as("one operation, resumed, not a second one").hasSize(1);
    }
}
