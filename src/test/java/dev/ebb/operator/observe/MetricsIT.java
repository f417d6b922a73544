package dev.ebb.operator.observe;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a Prometheus scrape of the operator finds, before and whatever the operator has done. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class MetricsIT {
    @TestHTTPResource("/q/metrics")
    URI metrics;

    @Inject
    KubernetesClient client;

    private List<String> scrape() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(HttpRequest.newBuilder(metrics).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body().lines().toList();
    }

    @Test
    void theOperatorsOwnMetricsAreThereWithTheirTypesFromTheStart() throws Exception {
        List<String> page = scrape();

        // the exposition names a counter's family without its _total suffix, as OpenMetrics does
        assertThat(page)
                .contains(
                        "# TYPE ebb_member_reads counter",
                        "# TYPE ebb_member_read_duration_seconds summary",
                        "# TYPE ebb_retirements counter",
                        "# TYPE ebb_retirement_duration_seconds summary");
        assertThat(page)
                .anyMatch(line -> line.startsWith("ebb_member_reads_total{verdict=\"idle\"}"))
                .anyMatch(line -> line.startsWith("ebb_member_reads_total{verdict=\"failed\"}"))
                .anyMatch(line -> line.startsWith("ebb_retirements_total{outcome=\"completed\"}"))
                .anyMatch(line -> line.startsWith("ebb_retirements_total{outcome=\"aborted\"}"));
        // the Java Operator SDK's own, per controller
        assertThat(page)
                .contains("# TYPE reconciliations_execution_duration_seconds histogram")
                .anyMatch(line -> line.startsWith(
                        "reconciliations_execution_duration_seconds_count{controller_name=\"modeldeployment\"}"));
    }

    @Test
    void eachRolesReplicasAreGaugedByState() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("metrics")
                        .role(role("server").replicas(2))
                        .build())
                .create();

        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> assertThat(scrape())
                                .contains("# TYPE ebb_replicas gauge")
                                .contains(
                                        "ebb_replicas{deployment=\"qwen\",namespace=\"metrics\",role=\"server\",state=\"desired\"} 2.0")
                                .contains(
                                        "ebb_replicas{deployment=\"qwen\",namespace=\"metrics\",role=\"server\",state=\"current\"} 2.0"));

        client.resources(ModelDeployment.class)
                .inNamespace("metrics")
                .withName("qwen")
                .delete();
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(scrape()).noneMatch(l -> l.contains("namespace=\"metrics\"")));
    }
}
