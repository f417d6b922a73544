package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.URLUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The test world's API server honours a delete's uid precondition, as the operator's deletions rely on it. */
class AdmittingDispatcherTest {
    private KubernetesMockServer server;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        server = SimApiServer.startServer();
        client = server.createClient();
    }

    @AfterEach
    void stop() {
        client.close();
        server.destroy();
    }

    private void deleteWithUid(String name, String uid) {
        String url = URLUtils.join(client.getMasterUrl().toString(), "api", "v1", "namespaces", "ns", "pods", name);
        client.raw(url, "DELETE", new DeleteOptionsBuilder().withNewPreconditions().withUid(uid).endPreconditions().build());
    }

    @Test
    void aDeleteNamingAnotherUidIsRefusedAndTheRightOneDeletes() {
        Pod pod = client.pods().inNamespace("ns").resource(new PodBuilder().withNewMetadata().withName("p").endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("x").endContainer().endSpec().build()).create();

        KubernetesClientException refused = catchThrowableOfType(KubernetesClientException.class, () -> deleteWithUid("p", "not-its-uid"));

        assertThat(refused.getCode()).isEqualTo(409);
        assertThat(refused.getMessage()).contains("Precondition failed");
        assertThat(client.pods().inNamespace("ns").withName("p").get()).isNotNull();

        deleteWithUid("p", pod.getMetadata().getUid());
        assertThat(client.pods().inNamespace("ns").withName("p").get()).isNull();
    }
}
