package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
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
        client.resource(new ServiceBuilder()
                        .withNewMetadata()
                        .withName("svc")
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .withSelector(Map.of("app", "x"))
                        .addNewPort()
                        .withPort(8000)
                        .withTargetPort(new IntOrString(8000))
                        .endPort()
                        .endSpec()
                        .build())
                .create();
        Pod pod = new PodBuilder(SimKubeletTest.enginePod("a", 15L, null))
                .editMetadata()
                .addToLabels("app", "x")
                .endMetadata()
                .build();
        client.resource(pod).create();
        ServiceTarget service = new ServiceTarget(world.endpoints(), NS, "svc");
        await().atMost(Duration.ofSeconds(5)).until(() -> service.pick().isPresent());
        LoadGenerator load = new LoadGenerator(service, 3, 100, Duration.ofMillis(20)).start(Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(3))
                .until(() -> world.kubelet().engine(NS, "a").orElseThrow().inFlight() == 3);

        client.pods().inNamespace(NS).withName("a").delete();
        load.stop(Duration.ofSeconds(5));

        assertThat(load.count(LoadGenerator.Outcome.CUT)).isEqualTo(3);
        assertThat(load.requests())
                .filteredOn(r -> r.outcome() == LoadGenerator.Outcome.CUT)
                .allSatisfy(
                        r -> assertThat(r.why())
                                .matches(
                                        "(stream ended after \\d+ of 100 tokens( without \\[DONE\\]| with an error event)?|connection lost: .*)"));
    }

    /**
     * Real vLLM ends a generation it aborts with an error event and then [DONE] (observed at vLLM 0.32.0 on SIGTERM): a
     * stream so ended, or one with fewer tokens than asked for, is cut, whatever its last line.
     */
    @Test
    void aStreamEndedByAnErrorEventOrShortOfItsTokensIsCutThoughItEndsWithDone() throws Exception {
        world = new SimWorld(client);
        List<String> bodies = List.of(
                "data: {\"choices\":[{\"text\":\" t0\"}]}\n\ndata: {\"error\": {\"message\": \"EngineCore encountered an issue.\", \"code\": 500}}\n\ndata: [DONE]\n\n",
                "data: {\"choices\":[{\"text\":\" t0\"}]}\n\ndata: [DONE]\n\n",
                "data: {\"choices\":[{\"text\":\" t0\"}]}\n\ndata: {\"choices\":[{\"text\":\" t1\"}]}\n\ndata: [DONE]\n\n");
        AtomicInteger served = new AtomicInteger();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
        server.createContext("/v1/completions", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] body = bodies.get(served.getAndIncrement()).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        try {
            LoadGenerator load = new LoadGenerator(
                    () -> Optional.of(new RouteTarget(
                            "p",
                            URI.create("http://127.0.0.1:" + server.getAddress().getPort()))),
                    1,
                    2,
                    Duration.ofMillis(1));

            assertThat(List.of(load.send(), load.send(), load.send()))
                    .extracting(LoadGenerator.Request::outcome, LoadGenerator.Request::why)
                    .containsExactly(
                            tuple(LoadGenerator.Outcome.CUT, "stream ended after 1 of 2 tokens with an error event"),
                            tuple(LoadGenerator.Outcome.CUT, "stream ended after 1 of 2 tokens"),
                            tuple(LoadGenerator.Outcome.COMPLETED, "2 tokens"));
        } finally {
            server.stop(0);
        }
    }
}
