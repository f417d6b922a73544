package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.observe.EventRecorder;
import dev.ebb.operator.packaging.PackagedOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The packaged operator, with its own RBAC and ServiceAccount token, on a real control plane. */
class DeployedOperatorIT {
    private static final String NS = "deployed";
    private static ClusterWorld world;
    private static KubernetesClient admin;
    private static PackagedOperator operator;
    private static ClusterNode node;

    @BeforeAll
    static void start() throws Exception {
        world = ClusterWorld.start(NS, "");
        admin = world.admin;
        operator = world.operator();
        node = world.node;
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    @Test
    void aModelDeploymentReachesReadyOnTheNodeTheSchedulerChose() throws Exception {
        admin.resource(deployment("qwen", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();

        await("the Pods")
                .atMost(Duration.ofSeconds(60))
                .until(() -> admin.pods().inNamespace(NS).list().getItems().size() == 2);
        ModelDeployment md = admin.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
        assertThat(admin.pods().inNamespace(NS).list().getItems())
                .allSatisfy(p -> assertThat(p.getMetadata().getOwnerReferences())
                        .anyMatch(o -> o.getUid().equals(md.getMetadata().getUid())));
        await("Ready")
                .atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(phase("qwen"))
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo("Ready"));
        assertThat(admin.pods().inNamespace(NS).list().getItems()).allSatisfy(p -> {
            assertThat(p.getSpec().getNodeName()).isEqualTo(node.name());
            assertThat(p.getStatus().getPodIP()).startsWith("10.244.");
        });
        // server-side apply wrote the finalizer, which the mock world's %test profile never does
        assertThat(admin.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("qwen")
                        .get()
                        .getMetadata()
                        .getFinalizers())
                .isNotEmpty();
        // in the order of their JSON paths, which fabric8's CRD generator sorts them by (crd-generator-api-v2 7.5.2,
        // AbstractCustomResourceHandler.handlePrinterColumns), not the order the annotations give
        assertThat(world.kubectl("get", "md", "qwen", "-n", NS))
                .containsPattern("(?m)^NAME +AGE +ENGINE +PHASE +RETIREMENT +ROLES$")
                .containsPattern("(?m)^qwen +\\S+ +vLLM +Ready +server 2/2$");
        // nothing its RBAC does not grant (a 403 for writing into a namespace being deleted is the API server's, not
        // RBAC's)
        assertThat(operator.log()).doesNotContain("is forbidden: User \"system:serviceaccount:");
    }

    @Test
    void anEventRecordedTwiceUnderTheOperatorsOwnRbacIsOneEventCountedTwice() throws Exception {
        admin.resource(deployment("told", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(1))
                        .build())
                .create();
        ModelDeployment subject = admin.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("told")
                .get();
        try (KubernetesClient asOperator = world.operatorClient()) {
            EventRecorder events = new EventRecorder(asOperator);

            events.warning(subject, "TestRepeated", "said twice");
            events.warning(subject, "TestRepeated", "said twice");
        }

        assertThat(admin.v1().events().inNamespace(NS).list().getItems())
                .filteredOn(e -> "TestRepeated".equals(e.getReason()))
                .singleElement()
                .satisfies(e -> assertThat(e.getCount()).isEqualTo(2));
    }

    private static String phase(String name) {
        ModelDeployment md = admin.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName(name)
                .get();
        return md == null || md.getStatus() == null ? null : md.getStatus().phase();
    }
}
