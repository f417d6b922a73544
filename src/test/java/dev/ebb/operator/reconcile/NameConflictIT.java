package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.RecordedEvents;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Two ModelDeployments in one namespace whose names render alike: the one that holds a name keeps its object as it
 * is, and the other reports the conflict instead of taking the object over, failing on it, or deleting it.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class NameConflictIT {
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Inject
    KubernetesClient client;

    private ModelDeployment fetch(String namespace, String name) {
        return client.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .withName(name)
                .get();
    }

    private static String ownerOf(HasMetadata object) {
        return object.getMetadata().getOwnerReferences().stream()
                .map(OwnerReference::getName)
                .findFirst()
                .orElse("");
    }

    private void assertNameConflict(String namespace, String name, String holder, String object) {
        await().atMost(PATIENCE).untilAsserted(() -> {
            ModelDeployment md = fetch(namespace, name);
            assertThat(md.getStatus()).isNotNull();
            assertThat(md.getStatus().phase()).isEqualTo(StatusAggregator.PHASE_DEGRADED);
            Condition ready = Conditions.find(md.getStatus().conditions(), Conditions.READY)
                    .orElseThrow();
            assertThat(ready.getStatus()).isEqualTo("False");
            assertThat(ready.getReason()).isEqualTo(StatusAggregator.REASON_NAME_CONFLICT);
            assertThat(ready.getMessage()).contains(object + " belongs to ModelDeployment " + holder);
            assertThat(RecordedEvents.occurrences(client, namespace)).anySatisfy(e -> {
                assertThat(e.getInvolvedObject().getName()).isEqualTo(name);
                assertThat(e.getReason()).isEqualTo(StatusAggregator.REASON_NAME_CONFLICT);
                assertThat(e.getType()).isEqualTo("Warning");
            });
        });
    }

    @Test
    void aRoleServiceAndPodAnotherDeploymentHoldsAreLeftToItAndTheConflictIsReported() {
        client.resource(deployment("a-b", "vLLM")
                        .namespace("names")
                        .role(role("c"))
                        .build())
                .create();
        await().atMost(PATIENCE)
                .until(() -> client.pods()
                                        .inNamespace("names")
                                        .withName(Names.pod("a-b", "c", 0, 0))
                                        .get()
                                != null
                        && client.services()
                                        .inNamespace("names")
                                        .withName(Names.roleService("a-b", "c"))
                                        .get()
                                != null);
        Service held = client.services().inNamespace("names").withName("a-b-c").get();

        client.resource(deployment("a", "vLLM")
                        .namespace("names")
                        .role(role("b-c"))
                        .build())
                .create();

        assertNameConflict("names", "a", "a-b", "Service a-b-c");
        assertNameConflict("names", "a", "a-b", "Pod a-b-c-r0-m0");
        Service after = client.services().inNamespace("names").withName("a-b-c").get();
        assertThat(after.getMetadata().getUid()).isEqualTo(held.getMetadata().getUid());
        assertThat(after.getSpec().getSelector()).isEqualTo(held.getSpec().getSelector());
        assertThat(ownerOf(client.pods()
                        .inNamespace("names")
                        .withName("a-b-c-r0-m0")
                        .get()))
                .isEqualTo("a-b");

        client.resources(ModelDeployment.class)
                .inNamespace("names")
                .withName("a")
                .delete();
        await().atMost(PATIENCE).until(() -> fetch("names", "a") == null);
        assertThat(client.services()
                        .inNamespace("names")
                        .withName("a-b-c")
                        .get()
                        .getMetadata()
                        .getUid())
                .isEqualTo(held.getMetadata().getUid());
        assertThat(client.pods().inNamespace("names").withName("a-b-c-r0-m0").get())
                .isNotNull();
    }

    @Test
    void aRouterWhoseServiceNameARoleHoldsIsNotWrittenAndItsRemovalLeavesTheRoleService() {
        client.resource(deployment("a", "vLLM")
                        .namespace("router-names")
                        .role(role("x-router"))
                        .build())
                .create();
        await().atMost(PATIENCE)
                .until(() -> client.services()
                                .inNamespace("router-names")
                                .withName("a-x-router")
                                .get()
                        != null);
        Service held = client.services()
                .inNamespace("router-names")
                .withName("a-x-router")
                .get();

        client.resource(deployment("a-x", "vLLM")
                        .namespace("router-names")
                        .router("vllm-router")
                        .role(role("server"))
                        .build())
                .create();

        assertNameConflict("router-names", "a-x", "a", "Service a-x-router");
        Service after = client.services()
                .inNamespace("router-names")
                .withName("a-x-router")
                .get();
        assertThat(ownerOf(after)).isEqualTo("a");
        assertThat(after.getSpec().getSelector()).isEqualTo(held.getSpec().getSelector());
        assertThat(after.getSpec().getPorts()).isEqualTo(held.getSpec().getPorts());

        client.resources(ModelDeployment.class)
                .inNamespace("router-names")
                .withName("a-x")
                .delete();
        await().atMost(PATIENCE).until(() -> fetch("router-names", "a-x") == null);
        assertThat(client.services()
                        .inNamespace("router-names")
                        .withName("a-x-router")
                        .get())
                .satisfies(s -> assertThat(s.getMetadata().getUid())
                        .isEqualTo(held.getMetadata().getUid()));
    }
}
