package dev.ebb.operator.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.reconcile.ModelDeploymentReconciler;
import dev.ebb.operator.sim.SimApiServer;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.processing.retry.GenericRetry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** The operator's health endpoints as Kubernetes probes them, with the checks that decide a restart, and how it retries. */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class HealthIT {
    @TestHTTPResource("/q/health/live")
    URI live;

    @TestHTTPResource("/q/health/ready")
    URI ready;

    @Inject
    ConfigurationService sdk;

    @Inject
    ModelDeploymentReconciler reconciler;

    private static HttpResponse<String> get(URI uri) throws Exception {
        return HttpClient.newHttpClient()
                .send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A failing pass must be retried for as long as it fails: after a last attempt the SDK waits hours for an event. */
    @Test
    void theDeployedControllerRetriesAFailedPassWithoutEnd() {
        var retry = sdk.getConfigurationFor(reconciler).getRetry();

        assertThat(retry).isInstanceOfSatisfying(GenericRetry.class, r -> {
            assertThat(r.getMaxAttempts()).as("attempts, -1 for no end").isEqualTo(-1);
            assertThat(r.getMaxInterval()).isEqualTo(15_000);
        });
    }

    @Test
    void theSdkReportsStoppedInformersToTheLivenessCheck() {
        assertThat(sdk.getInformerStoppedHandler())
                .hasValueSatisfying(handler -> assertThat(handler).isInstanceOf(InformerLiveness.class));
    }

    @Test
    void livenessCarriesTheInformerCheckAndReadinessTheSdksAndTheShutdownOne() throws Exception {
        HttpResponse<String> liveness = get(live);
        HttpResponse<String> readiness = get(ready);

        assertThat(liveness.statusCode()).isEqualTo(200);
        assertThat(liveness.body()).contains(InformerLiveness.NAME);
        assertThat(readiness.statusCode()).isEqualTo(200);
        assertThat(readiness.body()).contains("Quarkus Operator SDK health check", "Graceful Shutdown");
    }
}
