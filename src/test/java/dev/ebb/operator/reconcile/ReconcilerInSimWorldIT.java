package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.ServiceTarget;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The operator in the test world: its Pods are run by the simulated kubelet and serve real requests. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class ReconcilerInSimWorldIT {
    @Inject
    KubernetesClient client;
    private SimWorld world;

    @BeforeEach
    void start() {
        world = new SimWorld(client);
    }

    @AfterEach
    void stop() {
        world.close();
    }

    @Test
    void replicasBecomeReadyAndServeThroughTheRoleService() {
        client.resource(deployment("qwen", "vLLM").namespace("world").role(role("server").replicas(2)).build()).create();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            ModelDeployment md = client.resources(ModelDeployment.class).inNamespace("world").withName("qwen").get();
            assertThat(md.getStatus()).isNotNull();
            assertThat(md.getStatus().phase()).isEqualTo("Ready");
            assertThat(md.getStatus().rolesSummary()).isEqualTo("server 2/2");
        });
        ServiceTarget service = new ServiceTarget(world.endpoints(), "world", "qwen-server");
        await().atMost(Duration.ofSeconds(5)).until(() -> service.pick().isPresent());

        LoadGenerator load = new LoadGenerator(service, 1, 3, Duration.ofMillis(5));
        assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(load.requests()).extracting(LoadGenerator.Request::pod)
                .containsExactlyInAnyOrder("qwen-server-r0-m0", "qwen-server-r1-m0");
    }
}
