package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.retire.RetirementState;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.RoutedSimWorld;
import dev.ebb.operator.sim.SimOperator;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A retirement recorded as deleting whose DELETE never took effect, because the API server failed it or the operator
 * was killed before sending it: the next pass, or the next operator, sends it again and the retirement completes.
 */
class LostDeleteIT {
    private static final String NS = "lost-delete";
    private static final String TARGET = "qwen-server-r1-m0";
    private static final String TARGET_PATH = "/api/v1/namespaces/" + NS + "/pods/" + TARGET;
    private static final Duration CONVERGE = Duration.ofSeconds(30);
    /** Far longer than the test takes to see Deleting recorded and kill the operator, which it polls for every 100 ms. */
    private static final Duration ANNOUNCEMENT_LATE = Duration.ofSeconds(5);

    @RegisterExtension
    final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");

    private final KubernetesClient client = sim.client();
    /** The operator sees a failed DELETE at once rather than after its client's own retries. */
    private final KubernetesClient operatorClient = sim.clientWithoutRetries();

    private final FakeRouter router = sim.router();

    private Optional<RetirementStatus> retirement() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
        return Optional.ofNullable(md)
                .map(ModelDeployment::getStatus)
                .flatMap(s -> s.retirements() == null
                        ? Optional.empty()
                        : s.retirements().stream().findFirst());
    }

    private Pod target() {
        return client.pods().inNamespace(NS).withName(TARGET).get();
    }

    private List<String> eventReasons() {
        return client.v1().events().inNamespace(NS).list().getItems().stream()
                .map(Event::getReason)
                .toList();
    }

    private void scaleDownFromTwo() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace(NS)
                        .router("llm-d-router")
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await().atMost(CONVERGE).until(() -> router.selects(TARGET));
        Specs.scale(client, NS, "qwen", "server", 1);
    }

    private boolean retirementIn(RetirementState... states) {
        return retirement()
                .filter(r -> Arrays.stream(states).map(Enum::name).anyMatch(r.state()::equals))
                .isPresent();
    }

    private void assertRetired() {
        await().atMost(CONVERGE).until(() -> target() == null);
        await().atMost(Duration.ofSeconds(10)).until(() -> retirement().isEmpty());
        // the Event follows the status that ends the retirement
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(eventReasons()).contains("Completed"));
        assertThat(eventReasons().stream().filter("RetirementStarted"::equals))
                .as("one operation, not a second one")
                .hasSize(1);
    }

    @Test
    void aDeleteTheApiServerFailedIsSentAgainAndTheRetirementCompletes() {
        try (SimOperator operator = new SimOperator(operatorClient, sim.exec(), sim.routers())) {
            sim.apiServer().fail("DELETE", TARGET_PATH, 503);
            scaleDownFromTwo();
            await().atMost(CONVERGE)
                    .until(() -> sim.apiServer().failed() > 0 && retirementIn(RetirementState.Settling));
            assertThat(target().getMetadata().getDeletionTimestamp()).isNull();

            sim.apiServer().lift();

            assertRetired();
        }
    }

    /**
     * The operator killed after it recorded Deleting and before its DELETE went out. The Event announcing the proof,
     * which it sends between the two, is answered late, so that the kill lands there every time.
     */
    @Test
    void aDeleteLostWhenTheOperatorWasKilledIsSentByTheNextOne() {
        SimOperator first = new SimOperator(operatorClient, sim.exec(), sim.routers());
        scaleDownFromTwo();
        await().atMost(CONVERGE).until(() -> retirementIn(RetirementState.Draining));
        sim.apiServer().answerLate("POST", "/api/v1/namespaces/" + NS + "/events", ANNOUNCEMENT_LATE);
        await().atMost(CONVERGE).until(() -> retirementIn(RetirementState.Deleting));
        first.crash();
        sim.apiServer().lift();
        assertThat(target().getMetadata().getDeletionTimestamp())
                .as("no DELETE took effect")
                .isNull();

        try (SimOperator second = new SimOperator(operatorClient, sim.exec(), sim.routers())) {
            assertRetired();
        }
    }
}
