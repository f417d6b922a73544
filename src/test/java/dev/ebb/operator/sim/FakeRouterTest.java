package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class FakeRouterTest {
    static final String NS = "sim";
    KubernetesClient client;
    private SimWorld world;
    private FakeRouter router;

    @BeforeEach
    void start() {
        world = new SimWorld(client);
        router = new FakeRouter(client, NS, Map.of("app", "x"), Map.of("app", "x", "serving", "true"));
        for (String name : new String[] {"a", "b"}) {
            Pod pod = new PodBuilder(SimKubeletTest.enginePod(name, 15L, null))
                    .editMetadata().addToLabels("app", "x").addToLabels("serving", "true").endMetadata().build();
            client.resource(pod).create();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> router.selected().size() == 2);
    }

    @AfterEach
    void stop() {
        router.close();
        world.close();
    }

    @Test
    void spreadsRequestsOverTheReadyPodsAndRecordsEachDispatch() {
        LoadGenerator load = new LoadGenerator(router, 1, 2, Duration.ofMillis(5));
        for (int i = 0; i < 4; i++) {
            assertThat(load.send().outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        }

        assertThat(router.dispatches()).extracting(FakeRouter.Dispatch::pod).containsExactly("a", "b", "a", "b");
        assertThat(load.requests()).extracting(LoadGenerator.Request::pod).containsExactly("a", "b", "a", "b");
    }

    @Test
    void dropsAPodOnItsDeletionTimestamp() {
        client.pods().inNamespace(NS).withName("a").delete();

        await().atMost(Duration.ofSeconds(2)).until(() -> !router.selects("a"));
        assertThat(router.selects("b")).isTrue();
    }

    @Test
    void dropsAPodThatLeavesItsSelector() {
        client.pods().inNamespace(NS).withName("b").edit(p -> {
            p.getMetadata().getLabels().put("serving", "false");
            return p;
        });

        await().atMost(Duration.ofSeconds(2)).until(() -> !router.selects("b"));
        Instant after = Instant.now();
        new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send();
        assertThat(router.dispatchesTo("b", after)).isEmpty();
        assertThat(router.dispatchesTo("a", after)).hasSize(1);
    }

    @Test
    void downRouterSelectsNothing() {
        router.setUp(false);

        assertThat(router.selected()).isEmpty();
        assertThat(new LoadGenerator(router, 1, 1, Duration.ofMillis(1)).send().outcome()).isEqualTo(LoadGenerator.Outcome.REJECTED);
    }
}
