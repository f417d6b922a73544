package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.ServiceTarget;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The operator in the test world: its Pods are run by the simulated kubelet and serve real requests. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class ReconcilerInSimWorldIT {
    @Inject
    KubernetesClient client;

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    @Test
    void replicasBecomeReadyAndServeThroughTheRoleService() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("world")
                        .role(role("server").replicas(2))
                        .build())
                .create();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            ModelDeployment md = client.resources(ModelDeployment.class)
                    .inNamespace("world")
                    .withName("qwen")
                    .get();
            assertThat(md.getStatus()).isNotNull();
            assertThat(md.getStatus().phase()).isEqualTo("Ready");
            assertThat(md.getStatus().rolesSummary()).isEqualTo("server 2/2");
        });
        ServiceTarget service = new ServiceTarget(world.endpoints(), "world", "qwen-server");
        await().atMost(Duration.ofSeconds(5)).until(() -> service.pick().isPresent());

        LoadGenerator load = new LoadGenerator(service, 1, 3, Duration.ofMillis(5));
        assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(load.requests())
                .extracting(LoadGenerator.Request::pod)
                .containsExactlyInAnyOrder("qwen-server-r0-m0", "qwen-server-r1-m0");
    }

    @Test
    void deletionDrainsThePodsFirstInPhaseDeletingThenRemovesTheRouterAndServices() throws Exception {
        client.resource(deployment("bye", "vLLM")
                        .namespace("leaving")
                        .router("vllm-router")
                        .role(role("server").replicas(2))
                        .build())
                .create();
        ServiceTarget service = new ServiceTarget(world.endpoints(), "leaving", Names.roleService("bye", "server"));
        await().atMost(Duration.ofSeconds(20)).until(() -> service.pick().isPresent() && readyPods("leaving") == 2);

        // a generation of about 8 s is streaming when the ModelDeployment is deleted
        LoadGenerator load = new LoadGenerator(service, 1, 160, Duration.ofMillis(50));
        CompletableFuture<LoadGenerator.Request> stream = CompletableFuture.supplyAsync(load::send);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> IntStream.range(0, 2)
                        .mapToObj(ordinal -> world.kubelet().engine("leaving", Names.pod("bye", "server", ordinal, 0)))
                        .flatMap(Optional::stream)
                        .anyMatch(engine -> engine.inFlight() > 0));
        client.resources(ModelDeployment.class)
                .inNamespace("leaving")
                .withName("bye")
                .delete();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            ModelDeployment md = client.resources(ModelDeployment.class)
                    .inNamespace("leaving")
                    .withName("bye")
                    .get();
            // a status not written yet is waited for, like a phase not yet Deleting
            assertThat(md).isNotNull();
            assertThat(md.getStatus()).isNotNull();
            assertThat(md.getStatus().phase()).isEqualTo("Deleting");
            assertThat(client.pods()
                            .inNamespace("leaving")
                            .withLabel(Labels.ROLE)
                            .list()
                            .getItems())
                    .isNotEmpty()
                    .allSatisfy(pod ->
                            assertThat(pod.getMetadata().getDeletionTimestamp()).isNotNull());
        });
        // while a Pod still finishes its stream, what carries the stream to it is still there
        assertThat(client.apps()
                        .deployments()
                        .inNamespace("leaving")
                        .withName(Names.router("bye"))
                        .get())
                .isNotNull();
        assertThat(client.services()
                        .inNamespace("leaving")
                        .withName(Names.roleService("bye", "server"))
                        .get())
                .isNotNull();
        assertThat(client.v1().events().inNamespace("leaving").list().getItems())
                .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("Deleting"));

        assertThat(stream.get(30, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(client.resources(ModelDeployment.class)
                            .inNamespace("leaving")
                            .withName("bye")
                            .get())
                    .isNull();
            assertThat(client.pods().inNamespace("leaving").list().getItems()).isEmpty();
            assertThat(client.services().inNamespace("leaving").list().getItems())
                    .isEmpty();
            assertThat(client.apps().deployments().inNamespace("leaving").list().getItems())
                    .isEmpty();
            assertThat(client.serviceAccounts()
                            .inNamespace("leaving")
                            .withName(Names.router("bye"))
                            .get())
                    .isNull();
            assertThat(client.rbac()
                            .roles()
                            .inNamespace("leaving")
                            .withName(Names.router("bye"))
                            .get())
                    .isNull();
            assertThat(client.rbac()
                            .roleBindings()
                            .inNamespace("leaving")
                            .withName(Names.router("bye"))
                            .get())
                    .isNull();
        });
    }

    /**
     * A Pod deleted by hand in the middle of a generation longer than its grace: the hook reads it busy until its last
     * read's deadline and lets SIGTERM through, writing so into the termination message, and the operator tells it
     * on the ModelDeployment, naming the Pod and why.
     */
    @Test
    void aHookThatLetsSigtermThroughWithoutReadingItsEngineIdleIsToldOnTheDeployment() throws Exception {
        client.resource(deployment("long", "vLLM")
                        .namespace("unproven")
                        .role(role("server").replicas(1).grace(15))
                        .build())
                .create();
        ServiceTarget service = new ServiceTarget(world.endpoints(), "unproven", Names.roleService("long", "server"));
        await().atMost(Duration.ofSeconds(20)).until(() -> service.pick().isPresent() && readyPods("unproven") == 1);
        String pod = Names.pod("long", "server", 0, 0);
        // about 40 s of tokens, well past the grace
        LoadGenerator load = new LoadGenerator(service, 1, 800, Duration.ofMillis(50));
        CompletableFuture.supplyAsync(load::send);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> world.kubelet()
                        .engine("unproven", pod)
                        .filter(e -> e.inFlight() > 0)
                        .isPresent());

        client.pods().inNamespace("unproven").withName(pod).delete();

        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(client.v1()
                                .events()
                                .inNamespace("unproven")
                                .list()
                                .getItems())
                        .anySatisfy(e -> {
                            assertThat(e.getReason()).isEqualTo(HookEndings.REASON);
                            assertThat(e.getType()).isEqualTo("Warning");
                            assertThat(e.getInvolvedObject().getName()).isEqualTo("long");
                            assertThat(e.getMessage()).contains(pod, "(deadline)", "no read may start after");
                        }));
    }

    /** The replicas' Pods that are ready; the router's own Pods carry no role. */
    private long readyPods(String namespace) {
        return client.pods().inNamespace(namespace).withLabel(Labels.ROLE).list().getItems().stream()
                .filter(Readiness::isPodReady)
                .count();
    }
}
