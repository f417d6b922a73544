package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class LoadGeneratorTest {
    static final String NS = "sim";
    KubernetesClient client;
    private SimWorld world;

    @AfterEach
    void stop() {
        world.close();
    }

    @Test
    void naiveDeleteOfAVllmPodUnderLoadCutsItsStreamsAndTheGeneratorSaysWhy() throws Exception {
        world = new SimWorld(client);
        client.resource(new ServiceBuilder().withNewMetadata().withName("svc").withNamespace(NS).endMetadata()
                .withNewSpec().withSelector(Map.of("app", "x"))
                .addNewPort().withPort(8000).withTargetPort(new IntOrString(8000)).endPort().endSpec().build()).create();
        Pod pod = new PodBuilder(SimKubeletTest.enginePod("a", 15L, null)).editMetadata().addToLabels("app", "x").endMetadata().build();
        client.resource(pod).create();
        ServiceTarget service = new ServiceTarget(world.endpoints(), NS, "svc");
        await().atMost(Duration.ofSeconds(5)).until(() -> service.pick().isPresent());
        LoadGenerator load = new LoadGenerator(service, 3, 100, Duration.ofMillis(20)).start(Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(3)).until(() -> world.kubelet().engine(NS, "a").orElseThrow().inFlight() == 3);

        client.pods().inNamespace(NS).withName("a").delete();
        load.stop(Duration.ofSeconds(5));

        assertThat(load.count(LoadGenerator.Outcome.CUT)).isEqualTo(3);
        assertThat(load.requests()).filteredOn(r -> r.outcome() == LoadGenerator.Outcome.CUT)
                .allSatisfy(r -> assertThat(r.why()).matches("(stream ended after \\d+ of 100 tokens|connection lost: .*)"));
    }
}
