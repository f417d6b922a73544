package dev.ebb.operator.sim;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.ScalingStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v1.Scale;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The test world's API server serves a ModelDeployment's scale subresource as Kubernetes serves a CRD's: read from
 * and written onto the paths the generated CRD names, through the same admission as any write of the object, with a
 * stale resourceVersion refused and a missing object not found. Autoscalers and `kubectl scale` use nothing else.
 */
class ScaleSubresourceTest {
    private static final String NS = "scale";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SELECTOR =
            "serving.ebb.dev/deployment=qwen,serving.ebb.dev/member-index=0,serving.ebb.dev/role=server,"
                    + "serving.ebb.dev/serving=true";
    private KubernetesMockServer server;
    private KubernetesClient client;
    private final HttpClient http = HttpClient.newHttpClient();

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

    private void create(Specs.Deployment shape) {
        ModelDeployment md = client.resource(shape.namespace(NS).build()).create();
        md.setStatus(new ModelDeploymentStatus(
                1L,
                "Ready",
                null,
                List.of(),
                null,
                null,
                List.of(),
                List.of(),
                List.of(),
                new ScalingStatus("server", 3, SELECTOR, null),
                null,
                null));
        client.resource(md).updateStatus();
    }

    private ModelDeployment stored() {
        return client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
    }

    private HttpResponse<String> send(String method, String contentType, String body) throws Exception {
        URI uri = URI.create(client.getMasterUrl() + "apis/serving.ebb.dev/v1alpha1/namespaces/" + NS
                + "/modeldeployments/qwen/scale");
        HttpRequest.Builder request = HttpRequest.newBuilder(uri);
        request = body == null
                ? request.method(method, HttpRequest.BodyPublishers.noBody())
                : request.header("Content-Type", contentType).method(method, HttpRequest.BodyPublishers.ofString(body));
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void fabric8ReadsTheScaleFromTheCrdsPathsAndWritesOnlyTheScaledReplicas() {
        create(deployment("qwen", "vLLM")
                .scaling("server", 3)
                .role(role("server").replicas(3))
                .role(role("other").replicas(2)));

        Scale read = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .scale();

        assertThat(read.getSpec().getReplicas()).isEqualTo(3);
        assertThat(read.getStatus().getReplicas()).isEqualTo(3);
        assertThat(read.getStatus().getSelector()).isEqualTo(SELECTOR);

        client.resources(ModelDeployment.class).inNamespace(NS).withName("qwen").scale(1);

        ModelDeployment after = stored();
        assertThat(after.getSpec().scaling().replicas()).isEqualTo(1);
        assertThat(after.getSpec().roles())
                .extracting(r -> r.name() + "=" + r.replicas())
                .containsExactly("server=3", "other=2");
        assertThat(Specs.RESOLVER.resolve(after))
                .isInstanceOfSatisfying(
                        Resolution.Accepted.class,
                        accepted -> assertThat(accepted.deployment().roles())
                                .extracting(r -> r.name() + "=" + r.replicas())
                                .containsExactly("server=1", "other=2"));
        assertThat(client.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("qwen")
                        .scale()
                        .getSpec()
                        .getReplicas())
                .isEqualTo(1);
    }

    @Test
    void withoutScalingReplicasAReadFailsAsKubernetesAnswersAndAMergePatchSetsThem() throws Exception {
        create(deployment("qwen", "vLLM").role(role("server").replicas(3)));

        HttpResponse<String> read = send("GET", null, null);
        assertThat(read.statusCode()).isEqualTo(500);
        assertThat(read.body()).contains("the spec replicas field \\\".spec.scaling.replicas\\\" does not exist");

        // what `kubectl scale md qwen --replicas=2` sends when it has no precondition to check
        HttpResponse<String> patched = send("PATCH", "application/merge-patch+json", "{\"spec\":{\"replicas\":2}}");

        assertThat(patched.statusCode()).isEqualTo(200);
        JsonNode scale = JSON.readTree(patched.body());
        assertThat(scale.path("kind").asText()).isEqualTo("Scale");
        assertThat(scale.path("apiVersion").asText()).isEqualTo("autoscaling/v1");
        assertThat(scale.path("spec").path("replicas").asInt()).isEqualTo(2);
        assertThat(scale.path("status").path("selector").asText()).isEqualTo(SELECTOR);
        assertThat(stored().getSpec().scaling().replicas()).isEqualTo(2);
        assertThat(stored().getSpec().scaling().role()).isNull();
    }

    @Test
    void aPatchThatLeavesTheReplicasEmptyIsRefused() throws Exception {
        create(deployment("qwen", "vLLM").role(role("server")));

        HttpResponse<String> patched =
                send("PATCH", "application/merge-patch+json", "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");

        assertThat(patched.statusCode()).isEqualTo(400);
        assertThat(patched.body()).contains("cannot be empty");
    }

    @Test
    void aPutAtAStaleResourceVersionConflictsAndOneAtTheCurrentOneWrites() throws Exception {
        create(deployment("qwen", "vLLM").scaling("server", 3).role(role("server")));
        Scale read = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .scale();
        String stale = read.getMetadata().getResourceVersion();
        client.resources(ModelDeployment.class).inNamespace(NS).withName("qwen").edit(md -> {
            md.getMetadata().setLabels(java.util.Map.of("touched", "yes"));
            return md;
        });

        HttpResponse<String> conflict = send(
                "PUT",
                "application/json",
                "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\","
                        + "\"metadata\":{\"name\":\"qwen\",\"namespace\":\"" + NS + "\",\"resourceVersion\":\"" + stale
                        + "\"},\"spec\":{\"replicas\":0}}");

        assertThat(conflict.statusCode()).isEqualTo(409);
        assertThat(conflict.body()).contains("the object has been modified");
        assertThat(stored().getSpec().scaling().replicas()).isEqualTo(3);

        String current = stored().getMetadata().getResourceVersion();
        HttpResponse<String> written = send(
                "PUT",
                "application/json",
                "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\","
                        + "\"metadata\":{\"name\":\"qwen\",\"namespace\":\"" + NS + "\",\"resourceVersion\":\""
                        + current + "\"},\"spec\":{\"replicas\":0}}");

        assertThat(written.statusCode()).isEqualTo(200);
        assertThat(stored().getSpec().scaling().replicas()).isZero();
        assertThat(stored().getMetadata().getLabels()).containsEntry("touched", "yes");
    }

    @Test
    void aScaleWriteGoesThroughTheCrdsAdmission() {
        create(deployment("qwen", "vLLM").scaling("server", 3).role(role("server")));

        KubernetesClientException refused = catchThrowableOfType(
                KubernetesClientException.class,
                () -> client.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("qwen")
                        .scale(1025));

        assertThat(refused.getCode()).isEqualTo(422);
        assertThat(refused.getStatus().getMessage()).contains("spec.scaling.replicas");
        assertThat(stored().getSpec().scaling().replicas()).isEqualTo(3);
    }

    @Test
    void theScaleOfAMissingObjectIsNotFound() throws Exception {
        HttpResponse<String> read = send("GET", null, null);
        HttpResponse<String> written = send("PATCH", "application/merge-patch+json", "{\"spec\":{\"replicas\":2}}");

        assertThat(read.statusCode()).isEqualTo(404);
        assertThat(read.body()).contains("modeldeployments.serving.ebb.dev \\\"qwen\\\" not found");
        assertThat(written.statusCode()).isEqualTo(404);
    }
}
