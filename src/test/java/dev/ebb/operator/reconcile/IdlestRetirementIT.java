package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.WorldPerTest;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which replica a scale-down takes, end to end in the test world: the one with the fewest requests in flight, read
 * from the engines themselves, whatever its ordinal; and the ordinal it frees is the first a scale-up fills again.
 */
@QuarkusTest
@WithTestResource(SimApiServer.class)
class IdlestRetirementIT {
    private static final Duration CONVERGE = Duration.ofSeconds(30);
    private static final Duration TOKEN = Duration.ofMillis(100);

    @Inject
    KubernetesClient client;

    @RegisterExtension
    final WorldPerTest world = new WorldPerTest();

    private final String ns = world.namespace("idlest");
    private final ExecutorService clients = Executors.newCachedThreadPool();
    /** Each stream sent straight to an engine, by the load that sent it. */
    private final List<LoadGenerator> direct = new ArrayList<>();

    @AfterEach
    void stop() {
        clients.shutdownNow();
    }

    private Pod pod(String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    private Optional<RetirementStatus> retirement() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(ns)
                .withName("qwen")
                .get();
        return Optional.ofNullable(md)
                .map(ModelDeployment::getStatus)
                .flatMap(s -> s.retirements() == null
                        ? Optional.empty()
                        : s.retirements().stream().findFirst());
    }

    /** Streams sent straight to one Pod's engine, each lasting about tokens × 100 ms: work that Pod holds. */
    private void streamsTo(String pod, int streams, int tokens) {
        FakeEngine engine = world.kubelet().engine(ns, pod).orElseThrow();
        int before = engine.inFlight();
        LoadGenerator load =
                new LoadGenerator(() -> Optional.of(new RouteTarget(pod, engine.uri(""))), streams, tokens, TOKEN);
        direct.add(world.closing(load));
        for (int i = 0; i < streams; i++) {
            CompletableFuture.runAsync(load::send, clients);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> engine.inFlight() >= before + streams);
    }

    @Test
    void aScaleDownUnderLoadRetiresTheReplicaWithTheFewestRequestsInFlightAndAScaleUpRefillsItsOrdinal()
            throws Exception {
        FakeRouter router = world.routerInFrontOf(ns, "qwen", RouterKind.LLM_D_ROUTER);
        client.resource(deployment("qwen", "vLLM")
                        .role(role("server").replicas(3).grace(30))
                        .router(RouterKind.LLM_D_ROUTER.wireName())
                        .namespace(ns)
                        .build())
                .create();
        await().atMost(CONVERGE)
                .until(() -> router.selects("qwen-server-r0-m0")
                        && router.selects("qwen-server-r1-m0")
                        && router.selects("qwen-server-r2-m0"));
        String middleUid = pod("qwen-server-r1-m0").getMetadata().getUid();
        // clients through the router add at most one stream anywhere, which never closes the gaps below
        LoadGenerator throughRouter =
                new LoadGenerator(router, 1, 10, Duration.ofMillis(50)).start(Duration.ofSeconds(120));
        // the highest ordinal is the busiest, and the middle one holds a single generation that outlasts the choice
        streamsTo("qwen-server-r0-m0", 4, 400);
        streamsTo("qwen-server-r1-m0", 1, 150);
        streamsTo("qwen-server-r2-m0", 7, 400);

        Specs.scale(client, ns, "qwen", "server", 2);

        await().atMost(CONVERGE)
                .untilAsserted(() -> assertThat(retirement()).hasValueSatisfying(r -> {
                    assertThat(r.replicaOrdinal()).isEqualTo(1);
                    assertThat(r.chosenBecause())
                            .matches("in flight [12], lowest of 3 read: r1 [12], r0 [45], r2 [78]");
                }));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> Optional.ofNullable(pod("qwen-server-r1-m0"))
                        .filter(p -> middleUid.equals(p.getMetadata().getUid()))
                        .isEmpty());
        await().atMost(CONVERGE).until(() -> retirement().isEmpty());
        assertThat(pod("qwen-server-r0-m0")).isNotNull();
        assertThat(pod("qwen-server-r2-m0")).isNotNull();
        assertThat(pod("qwen-server-r3-m0")).isNull();

        Specs.scale(client, ns, "qwen", "server", 3);

        await().atMost(CONVERGE)
                .until(() -> Optional.ofNullable(pod("qwen-server-r1-m0"))
                        .filter(p -> !middleUid.equals(p.getMetadata().getUid()))
                        .isPresent());
        assertThat(pod("qwen-server-r3-m0")).isNull();
        throughRouter.stop(Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> direct.stream().mapToLong(l -> l.requests().size()).sum() == 12);
        assertThat(direct)
                .flatMap(LoadGenerator::requests)
                .extracting(LoadGenerator.Request::outcome)
                .containsOnly(LoadGenerator.Outcome.COMPLETED);
        assertThat(throughRouter.requests())
                .extracting(LoadGenerator.Request::outcome)
                .doesNotContain(LoadGenerator.Outcome.CUT)
                .contains(LoadGenerator.Outcome.COMPLETED);
        assertThat(client.v1().events().inNamespace(ns).list().getItems())
                .extracting(Event::getReason)
                .contains("RetirementStarted", "Completed");
    }
}
