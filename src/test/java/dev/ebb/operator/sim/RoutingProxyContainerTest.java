package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Platform;
import dev.ebb.operator.drain.DrainWarning;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A direct decoder's Pod with llm-d's routing proxy in front of its engine, every container running: a stream reaches
 * the engine only through the proxy, and what the proxy's form (native sidecar or classic container) does to it when
 * the Pod is deleted.
 */
@EnableKubernetesMockClient(crud = true)
class RoutingProxyContainerTest {
    private static final String NS = "sim";
    private static final String POD = "qwen-decode-r0-m0";
    /** 10 s of streaming, well inside the grace of 30. */
    private static final int TOKENS = 200;

    private static final PodRenderer RENDERER = new PodRenderer();

    KubernetesClient client;

    @RegisterExtension
    final KubeletPerTest kubelets = new KubeletPerTest(() -> client);

    private static DesiredDeployment onPlatform(Platform platform) {
        return Specs.deployment("qwen", "vLLM")
                .namespace(NS)
                .scaling("prefill")
                .router("llm-d-router")
                .role(Specs.role("prefill").kind("Prefill"))
                .role(Specs.role("decode").kind("Decode").port(8000))
                .desired()
                .on(platform);
    }

    /** Creates the decoder's Pod and starts a stream to the role's port, which the proxy holds; returns once the engine holds it. */
    private CompletableFuture<LoadGenerator.Request> streamThroughTheProxy(DesiredDeployment deployment) {
        DesiredRole decode = deployment.roles().get(1);
        client.resource(HookScriptMounts.provide(
                        client,
                        RENDERER.render(
                                new MemberSlot(deployment, decode, 0, 0), RENDERER.configHash(deployment, decode))))
                .create();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> kubelets.get()
                                .engine(NS, POD)
                                .filter(e -> e.state() == FakeEngine.State.SERVING)
                                .isPresent()
                        && address().isPresent());
        FakeEngine engine = kubelets.get().engine(NS, POD).orElseThrow();
        assertThat(engine.port()).as("the engine listens behind the proxy").isNotEqualTo(8000);
        URI proxy = URI.create("http://" + address().orElseThrow() + ":8000");
        LoadGenerator load =
                new LoadGenerator(() -> Optional.of(new RouteTarget(POD, proxy)), 1, TOKENS, Duration.ofMillis(50));
        CompletableFuture<LoadGenerator.Request> stream = CompletableFuture.supplyAsync(load::send);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 1);
        return stream;
    }

    private Optional<String> address() {
        Pod pod = client.pods().inNamespace(NS).withName(POD).get();
        return Optional.ofNullable(pod).map(Pod::getStatus).map(s -> s.getPodIP());
    }

    private void deleteAndAwaitGone() {
        client.pods().inNamespace(NS).withName(POD).delete();
        await().atMost(Duration.ofSeconds(40))
                .until(() -> client.pods().inNamespace(NS).withName(POD).get() == null);
    }

    @Test
    void aNativeSidecarOutlivesTheEnginesDrainSoTheProxiedStreamEnds() throws Exception {
        DesiredDeployment current = onPlatform(Platform.CURRENT);
        CompletableFuture<LoadGenerator.Request> stream = streamThroughTheProxy(current);

        deleteAndAwaitGone();

        assertThat(stream.get(5, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.COMPLETED);
        assertThat(RENDERER.drainTimeline(current, current.roles().get(1)).warnings())
                .isEmpty();
    }

    @Test
    void belowKubernetes129TheClassicProxyContainerStopsAtTheDeleteAndCutsTheStreamAsTheStatusWarns() throws Exception {
        DesiredDeployment older = onPlatform(Platform.BEFORE_NATIVE_SIDECARS);
        CompletableFuture<LoadGenerator.Request> stream = streamThroughTheProxy(older);

        client.pods().inNamespace(NS).withName(POD).delete();

        LoadGenerator.Request ended = stream.get(10, TimeUnit.SECONDS);
        assertThat(ended.outcome()).isEqualTo(Outcome.CUT);
        assertThat(Duration.between(ended.start(), ended.end()))
                .as("cut at the delete, not at the grace")
                .isLessThan(Duration.ofSeconds(10));
        assertThat(RENDERER.drainTimeline(older, older.roles().get(1)).warnings())
                .extracting(DrainWarning::reason)
                .containsExactly(DrainWarning.PROXY_STOPS_AT_DELETE);
        await().atMost(Duration.ofSeconds(40))
                .until(() -> client.pods().inNamespace(NS).withName(POD).get() == null);
    }

    @Test
    void theProxyAnswersItsOwnHealthAndPassesMetricsThroughToTheEngine() throws Exception {
        streamThroughTheProxy(onPlatform(Platform.CURRENT));
        String proxy = "http://" + address().orElseThrow() + ":8000";
        HttpClient http = HttpClient.newHttpClient();

        HttpResponse<String> health = http.send(
                HttpRequest.newBuilder(URI.create(proxy + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> metrics = http.send(
                HttpRequest.newBuilder(URI.create(proxy + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("vllm:num_requests_running");
    }
}
