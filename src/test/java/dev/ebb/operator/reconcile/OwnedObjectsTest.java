package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.lifecycle.LeaseGuard;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class OwnedObjectsTest {
    KubernetesMockServer server;
    KubernetesClient client;

    private Service ownedService(ModelDeployment md) {
        return client.resource(new ServiceBuilder()
                        .withNewMetadata()
                        .withName("qwen-server")
                        .withNamespace("team-a")
                        .addNewOwnerReference()
                        .withApiVersion("serving.ebb.dev/v1alpha1")
                        .withKind("ModelDeployment")
                        .withName("qwen")
                        .withUid(md.getMetadata().getUid())
                        .withController(true)
                        .endOwnerReference()
                        .endMetadata()
                        .withNewSpec()
                        .addNewPort()
                        .withPort(8000)
                        .endPort()
                        .endSpec()
                        .build())
                .create();
    }

    @Test
    void anOperatorThatNoLongerLeadsDeletesNothing() {
        ModelDeployment md = deployment("qwen", "vLLM").role(role("server")).build();
        Service service = ownedService(md);
        List<String> asked = new CopyOnWriteArrayList<>();

        new OwnedObjects(client, before -> asked.add(before) && false).delete(md, service);

        assertThat(asked).containsExactly("deleting Service team-a/qwen-server");
        assertThat(client.services()
                        .inNamespace("team-a")
                        .withName("qwen-server")
                        .get())
                .isNotNull();
    }

    @Test
    void theLeaderDeletesItsOwn() {
        ModelDeployment md = deployment("qwen", "vLLM").role(role("server")).build();

        new OwnedObjects(client, LeaseGuard.NOT_ELECTING).delete(md, ownedService(md));

        assertThat(client.services()
                        .inNamespace("team-a")
                        .withName("qwen-server")
                        .get())
                .isNull();
    }
}
