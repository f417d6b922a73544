package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A delete or an eviction that gives a Pod less grace than its own: the kubelet kills by the shorter one. */
class DeleteGraceTest {
    private static final String NS = SimKubeletTest.NS;
    /** A hook that would use all of a 30 s grace. */
    private static final List<String> LONG_HOOK = List.of("python3", "-c", "import time; time.sleep(30)");

    private final KubernetesMockServer server = SimApiServer.startServer();
    private final KubernetesClient client = server.createClient();
    private final SimKubelet kubelet = new SimKubelet(client, new LoopbackAddresses());

    @AfterEach
    void stop() {
        kubelet.close();
        client.close();
        server.destroy();
    }

    private Pod fetch(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    /** An SGLang engine holding one long stream, which only the kill cuts. */
    private CompletableFuture<LoadGenerator.Request> runningWithAStream(String name) {
        client.resource(SimKubeletTest.sglangPod(name, 30L, LONG_HOOK)).create();
        await().atMost(Duration.ofSeconds(5))
                .until(() -> kubelet.engine(NS, name).isPresent()
                        && fetch(name).getStatus() != null
                        && "Running".equals(fetch(name).getStatus().getPhase()));
        FakeEngine engine = kubelet.engine(NS, name).orElseThrow();
        // Running comes before the model is loaded; a request sent before then is refused
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.state() == FakeEngine.State.SERVING);
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget(name, engine.uri(""))), 1, 2000, Duration.ofMillis(20));
        CompletableFuture<LoadGenerator.Request> held = CompletableFuture.supplyAsync(load::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);
        return held;
    }

    private void killedByTheShorterGrace(String name, Consumer<String> delete) throws Exception {
        CompletableFuture<LoadGenerator.Request> held = runningWithAStream(name);

        delete.accept(name);

        assertThat(fetch(name).getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(3L);
        // the hook is cut at 3 s and the engine killed 2 s later: well before the Pod's own 30 s
        await().atMost(Duration.ofSeconds(15)).until(() -> fetch(name) == null);
        Termination t = kubelet.terminations().stream()
                .filter(x -> x.pod().equals(name))
                .findFirst()
                .orElseThrow();
        assertThat(t.hook())
                .hasValueSatisfying(hook -> assertThat(hook).isBetween(Duration.ofMillis(2900), Duration.ofSeconds(5)));
        assertThat(t.killed()).isTrue();
        assertThat(held.get(5, TimeUnit.SECONDS).outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    @Test
    void aDeleteWithAShorterGraceKillsByIt() throws Exception {
        killedByTheShorterGrace(
                "short",
                name -> client.pods()
                        .inNamespace(NS)
                        .withName(name)
                        .withGracePeriod(3)
                        .delete());
    }

    @Test
    void anEvictionWithAShorterGraceKillsByIt() throws Exception {
        killedByTheShorterGrace(
                "evicted",
                name -> assertThat(client.pods()
                                .inNamespace(NS)
                                .withName(name)
                                .evict(new EvictionBuilder()
                                        .withNewMetadata()
                                        .withName(name)
                                        .withNamespace(NS)
                                        .endMetadata()
                                        .withDeleteOptions(new DeleteOptionsBuilder()
                                                .withGracePeriodSeconds(3L)
                                                .build())
                                        .build()))
                        .isTrue());
    }

    @Test
    void aPlainDeleteRecordsThePodsOwnGraceAndALaterDeleteOnlyShortensIt() {
        Pod pod = SimKubeletTest.enginePod("plain", 40L, null);
        pod.getMetadata().setFinalizers(List.of("test.ebb.dev/hold"));
        client.resource(pod).create();

        client.pods().inNamespace(NS).withName("plain").delete();
        assertThat(fetch("plain").getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(40L);
        client.pods().inNamespace(NS).withName("plain").withGracePeriod(50).delete();
        assertThat(fetch("plain").getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(40L);
        client.pods().inNamespace(NS).withName("plain").withGracePeriod(5).delete();
        assertThat(fetch("plain").getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(5L);
    }
}
