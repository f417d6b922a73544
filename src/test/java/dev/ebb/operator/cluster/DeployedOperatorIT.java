package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.packaging.PackagedOperator;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The packaged operator, with its own RBAC and ServiceAccount token, on a real control plane. */
class DeployedOperatorIT {
    private static final String NS = "deployed";
    private static final Path LOG = Path.of("target", "cluster", "deployed-operator.log");
    private static ControlPlane plane;
    private static KubernetesClient admin;
    private static PackagedOperator operator;

    @BeforeAll
    static void start() throws Exception {
        plane = ControlPlane.shared();
        admin = plane.adminClient();
        ClusterCrd.install(admin);
        admin.resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
        operator = DeployedOperator.start(plane, "ebb-operator-0", LOG, Map.of("EBB_WATCH_NAMESPACES", ""));
        await("the operator ready").atMost(Duration.ofSeconds(90)).until(() -> operator.status("/q/health/ready") == 200);
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
        admin.namespaces().withName(NS).delete();
        admin.close();
    }

    @Test
    void itRendersTheReplicasAndWritesItsFinalizerAndStatus() throws Exception {
        admin.resource(deployment("qwen", "vLLM").namespace(NS).role(role("server").replicas(2)).build()).create();

        await("the Pods").atMost(Duration.ofSeconds(60)).until(() -> admin.pods().inNamespace(NS).list().getItems().size() == 2);
        List<Pod> pods = admin.pods().inNamespace(NS).list().getItems();
        ModelDeployment md = admin.resources(ModelDeployment.class).inNamespace(NS).withName("qwen").get();
        assertThat(pods).allSatisfy(p -> assertThat(p.getMetadata().getOwnerReferences()).anyMatch(o -> o.getUid().equals(md.getMetadata().getUid())));
        await("its status").atMost(Duration.ofSeconds(30)).until(() -> {
            ModelDeployment now = admin.resources(ModelDeployment.class).inNamespace(NS).withName("qwen").get();
            return now.getStatus() != null && now.getStatus().phase() != null;
        });
        System.out.println(admin.resources(ModelDeployment.class).inNamespace(NS).withName("qwen").get());
        assertThat(operator.log()).doesNotContain("Forbidden").doesNotContain("forbidden");
    }
}
