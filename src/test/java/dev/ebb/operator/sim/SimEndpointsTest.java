package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class SimEndpointsTest {
    static final String NS = "sim";
    KubernetesClient client;
    private SimWorld world;

    @BeforeEach
    void start() {
        world = new SimWorld(client);
        client.resource(new ServiceBuilder()
                        .withNewMetadata()
                        .withName("svc")
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .withSelector(Map.of("app", "x", "serving", "true"))
                        .addNewPort()
                        .withName("http")
                        .withPort(80)
                        .withTargetPort(new IntOrString(8000))
                        .endPort()
                        .endSpec()
                        .build())
                .create();
    }

    @AfterEach
    void stop() {
        world.close();
    }

    private void pod(String name, String serving) {
        // the hook keeps a deleted Pod Terminating for a while, as a draining engine would
        Pod pod = new PodBuilder(
                        SimKubeletTest.enginePod(name, 15L, List.of("python3", "-c", "import time; time.sleep(3)")))
                .editMetadata()
                .withNamespace(NS)
                .addToLabels("app", "x")
                .addToLabels("serving", serving)
                .endMetadata()
                .build();
        client.resource(pod).create();
    }

    private List<Endpoint> endpoints() {
        return world.endpoints().slicesOf(NS, "svc").stream()
                .flatMap(s -> s.getEndpoints() == null ? Stream.<Endpoint>empty() : s.getEndpoints().stream())
                .toList();
    }

    @Test
    void listsSelectedPodsWithTheirAddressAndTargetPort() {
        pod("a", "true");
        pod("b", "true");
        pod("other", "false");

        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(endpoints()).extracting(e -> e.getTargetRef().getName()).containsExactly("a", "b");
            assertThat(endpoints()).allSatisfy(e -> {
                assertThat(e.getConditions().getReady()).isTrue();
                assertThat(e.getAddresses().get(0)).startsWith("127.0.");
            });
            assertThat(world.endpoints()
                            .slicesOf(NS, "svc")
                            .get(0)
                            .getPorts()
                            .get(0)
                            .getPort())
                    .isEqualTo(8000);
        });
    }

    @Test
    void terminatingPodStaysListedButNotReady() {
        pod("a", "true");
        await().atMost(Duration.ofSeconds(5))
                .until(() -> endpoints().size() == 1
                        && endpoints().get(0).getConditions().getReady());

        client.pods().inNamespace(NS).withName("a").delete();

        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(endpoints()).singleElement().satisfies(e -> {
                    assertThat(e.getConditions().getReady()).isFalse();
                    assertThat(e.getConditions().getServing()).isTrue();
                    assertThat(e.getConditions().getTerminating()).isTrue();
                }));
    }

    @Test
    void podThatStopsMatchingTheSelectorLeavesTheSlice() {
        pod("a", "true");
        await().atMost(Duration.ofSeconds(5)).until(() -> endpoints().size() == 1);

        client.pods().inNamespace(NS).withName("a").edit(p -> {
            p.getMetadata().getLabels().put("serving", "false");
            return p;
        });

        await().atMost(Duration.ofSeconds(5)).until(() -> endpoints().isEmpty());
    }

    @Test
    void podThatIsNotReadyIsListedNeitherReadyNorServing() {
        pod("a", "true");
        await().atMost(Duration.ofSeconds(5))
                .until(() -> endpoints().size() == 1
                        && endpoints().get(0).getConditions().getReady());

        client.pods().inNamespace(NS).withName("a").editStatus(p -> {
            p.getStatus().getConditions().stream()
                    .filter(c -> c.getType().equals("Ready"))
                    .forEach(c -> c.setStatus("False"));
            return p;
        });

        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(endpoints()).singleElement().satisfies(e -> {
                    assertThat(e.getConditions().getReady()).isFalse();
                    assertThat(e.getConditions().getServing()).isFalse();
                    assertThat(e.getConditions().getTerminating()).isFalse();
                }));
    }
}
