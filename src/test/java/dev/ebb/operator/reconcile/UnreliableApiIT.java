package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RoutedSimWorld;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.UnreliableApi;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator against an API server that refuses a third of its writes (500, 429, and 409 for updates), answers it
 * up to half a second late, and expires every watch every few seconds, with no client-side retries to hide any of it:
 * a scale-down and a rollout under streaming load still converge, and cut nothing.
 */
class UnreliableApiIT {
    private static final String NS = "unreliable";
    private static final String OPERATOR = "ebb-operator-under-test";
    private static final long SEED = 20261130L;

    @RegisterExtension
    final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");

    private final KubernetesClient client = sim.client();
    private final KubernetesClient operatorClient = sim.clientWithoutRetries(OPERATOR);
    private final FakeRouter router = sim.router();
    private final ScheduledExecutorService expiries = Executors.newSingleThreadScheduledExecutor();
    private final AtomicInteger watchesExpired = new AtomicInteger();

    @AfterEach
    void stop() {
        expiries.shutdownNow();
    }

    private List<Pod> servers() {
        return client.pods()
                .inNamespace(NS)
                .withLabel(Labels.ROLE, "server")
                .list()
                .getItems();
    }

    private Optional<ModelDeploymentStatus> status() {
        return Optional.ofNullable(client.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("qwen")
                        .get())
                .map(ModelDeployment::getStatus);
    }

    /** Exactly these replicas, none leaving, all at one configuration, every one serving, and no retirement open. */
    private boolean settledAt(int replicas, String image) {
        List<Pod> pods = servers();
        return pods.size() == replicas
                && pods.stream()
                        .allMatch(p -> p.getMetadata().getDeletionTimestamp() == null
                                && Labels.SERVING_YES.equals(
                                        p.getMetadata().getLabels().get(Labels.SERVING))
                                && image.equals(
                                        p.getSpec().getContainers().get(0).getImage()))
                && pods.stream().allMatch(p -> router.selects(p.getMetadata().getName()))
                && status().map(s -> s.retirements() == null || s.retirements().isEmpty())
                        .orElse(false);
    }

    /**
     * Every write of the operator refused for longer than a handful of retries take, while nothing else in the world
     * changes: a retirement mid-way must go on once the API server answers again, not wait for an event that may never
     * come.
     */
    @Test
    void aRetirementGoesOnAfterAnOutageLongerThanTheRetriesWithNothingElseHappening() {
        try (SimOperator operator = new SimOperator(operatorClient, sim.exec(), sim.routers())) {
            client.resource(deployment("qwen", "vLLM")
                            .namespace(NS)
                            .router("llm-d-router")
                            .role(role("server").replicas(2))
                            .build())
                    .create();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> servers().size() == 2
                            && servers().stream()
                                    .allMatch(
                                            p -> router.selects(p.getMetadata().getName())));
            String image = servers().get(0).getSpec().getContainers().get(0).getImage();
            sim.apiServer().unreliable(new UnreliableApi(OPERATOR, 1.0, Duration.ZERO, SEED));

            Specs.scale(client, NS, "qwen", "server", 1);
            // the operator keeps trying, and failing, for longer than five retries with the SDK's default backoff take
            int refusedAtFirst = sim.apiServer().failed();
            await().atMost(Duration.ofSeconds(40))
                    .pollDelay(Duration.ofSeconds(30))
                    .until(() -> sim.apiServer().failed() > refusedAtFirst);
            sim.apiServer().reliable();

            await().atMost(Duration.ofSeconds(40)).until(() -> settledAt(1, image));
        }
    }

    @Test
    void aScaleDownAndARolloutConvergeAndCutNothingThoughWritesFailAndWatchesExpire() throws Exception {
        try (SimOperator operator = new SimOperator(operatorClient, sim.exec(), sim.routers())) {
            client.resource(deployment("qwen", "vLLM")
                            .namespace(NS)
                            .router("llm-d-router")
                            .role(role("server").replicas(3))
                            .build())
                    .create();
            String firstImage = "default/vllm:test";
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> servers().size() == 3
                            && servers().stream()
                                    .allMatch(
                                            p -> router.selects(p.getMetadata().getName())));
            firstImage = servers().get(0).getSpec().getContainers().get(0).getImage();
            LoadGenerator load = new LoadGenerator(router, 3, 30, Duration.ofMillis(50)).start(Duration.ofMinutes(5));
            await().atMost(Duration.ofSeconds(10)).until(() -> load.count(LoadGenerator.Outcome.COMPLETED) >= 3);

            sim.apiServer().unreliable(new UnreliableApi(OPERATOR, 0.3, Duration.ofMillis(500), SEED));
            expiries.scheduleAtFixedRate(
                    () -> watchesExpired.addAndGet(sim.apiServer().expireWatches()), 3, 3, TimeUnit.SECONDS);

            Specs.scale(client, NS, "qwen", "server", 1);
            String before = firstImage;
            await().atMost(Duration.ofSeconds(120)).until(() -> settledAt(1, before));

            Specs.scale(client, NS, "qwen", "server", 2);
            Specs.editRole(client, NS, "qwen", "server", r -> Specs.withImage(r, "vllm/vllm-openai:v0.12.0"));
            await().atMost(Duration.ofMinutes(4)).until(() -> settledAt(2, "vllm/vllm-openai:v0.12.0"));
            load.stop(Duration.ofSeconds(10));

            System.out.printf(
                    "unreliable API: %d writes refused, %d watches expired; requests completed %d, cut %d%n",
                    sim.apiServer().failed(),
                    watchesExpired.get(),
                    load.count(LoadGenerator.Outcome.COMPLETED),
                    load.count(LoadGenerator.Outcome.CUT));
            assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
            assertThat(sim.apiServer().failed())
                    .as("writes refused to the operator")
                    .isGreaterThan(5);
            assertThat(watchesExpired.get())
                    .as("watches expired under the operator")
                    .isGreaterThan(5);
            assertThat(sim.world().kubelet().terminations())
                    .filteredOn(t -> t.namespace().equals(NS))
                    .isNotEmpty()
                    .allSatisfy(t -> assertThat(t.killed()).isFalse());
        }
    }
}
