package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Service;
import org.junit.jupiter.api.Test;

class ServiceRendererTest {
    private final DesiredDeployment desired =
            deployment("qwen", "vLLM").role(role("server").port(9000).size(2)).desired();

    @Test
    void roleServiceSelectsOnlyServingLeadersOfItsRole() {
        Service service = ServiceRenderer.roleService(desired, desired.roles().get(0));

        assertThat(service.getMetadata().getName()).isEqualTo("qwen-server");
        assertThat(service.getSpec().getType()).isEqualTo("ClusterIP");
        assertThat(service.getSpec().getSelector())
                .containsOnly(
                        entry(Labels.DEPLOYMENT, "qwen"), entry(Labels.ROLE, "server"),
                        entry(Labels.MEMBER_INDEX, "0"), entry(Labels.SERVING, "true"));
        assertThat(service.getSpec().getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getPort()).isEqualTo(9000);
            assertThat(p.getTargetPort().getIntVal()).isEqualTo(9000);
        });
        assertThat(service.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(ref -> assertThat(ref.getUid()).isEqualTo("uid-qwen"));
    }

    @Test
    void replicaServiceIsHeadlessAndPublishesMembersBeforeTheyAreReady() {
        Service service =
                ServiceRenderer.replicaService(desired, desired.roles().get(0), 7);

        assertThat(service.getMetadata().getName()).isEqualTo("qwen-server-r7");
        assertThat(service.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(service.getSpec().getPublishNotReadyAddresses()).isTrue();
        assertThat(service.getSpec().getSelector())
                .containsOnly(
                        entry(Labels.DEPLOYMENT, "qwen"), entry(Labels.ROLE, "server"), entry(Labels.REPLICA, "7"));
    }

    private static java.util.Map.Entry<String, String> entry(String key, String value) {
        return java.util.Map.entry(key, value);
    }
}
