package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.RoutedSimWorld;
import dev.ebb.operator.sim.SimOperator;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two operator builds, the second differing from the first only in its drain hook and its default engine image: it
 * takes over a running deployment and restarts no engine, and only the user's refresh token turns the replicas over,
 * one at a time through the retirement protocol, with nothing cut.
 */
class OperatorUpgradeIT {
    private static final String NS = "upgrade";
    private static final List<String> SERVERS = List.of("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
    /** Behaves as this release's hook does (a comment is all it adds), yet is another text, so another revision. */
    private static final String OLDER_HOOK = DrainHook.SCRIPT + "\n# as an older release shipped it\n";

    private static final String OLDER_DEFAULT = "vllm/vllm-openai:v0.10.0";
    private static final String NEWER_DEFAULT = "vllm/vllm-openai:v0.11.0";

    @RegisterExtension
    final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");

    private final KubernetesClient client = sim.client();
    private final FakeRouter router = sim.router();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        sampler.shutdownNow();
    }

    private List<Pod> servers() {
        return client.pods()
                .inNamespace(NS)
                .withLabel(Labels.ROLE, "server")
                .list()
                .getItems();
    }

    private Set<String> uids() {
        return servers().stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
    }

    private Optional<ModelDeploymentStatus> status() {
        return Optional.ofNullable(client.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("qwen")
                        .get())
                .map(ModelDeployment::getStatus);
    }

    private Optional<RoleStatus> server() {
        return status().flatMap(s ->
                s.roles() == null ? Optional.empty() : s.roles().stream().findFirst());
    }

    private List<Event> events(String reason) {
        return RecordedEvents.occurrences(client, NS).stream()
                .filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    @Test
    void anUpgradeThatChangesOnlyTheHookAndTheDefaultImageRestartsNothingUntilTheUserRefreshes() throws Exception {
        SimOperator older = new SimOperator(
                client, sim.exec(), sim.routers(), Map.of("ebb.images.vllm", OLDER_DEFAULT), OLDER_HOOK);
        Set<String> before;
        String hash;
        try {
            client.resource(deployment("qwen", "vLLM")
                            .namespace(NS)
                            .router("llm-d-router")
                            .role(role("server").replicas(3))
                            .build())
                    .create();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> SERVERS.stream().allMatch(router::selects)
                            && server().filter(r -> r.ready() == 3).isPresent());
            before = uids();
            hash = servers().get(0).getMetadata().getLabels().get(Labels.CONFIG_HASH);
        } finally {
            older.close();
        }

        SimOperator newer = new SimOperator(
                client, sim.exec(), sim.routers(), Map.of("ebb.images.vllm", NEWER_DEFAULT), DrainHook.SCRIPT);
        try {
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(server()).hasValueSatisfying(r -> {
                        assertThat(r.hookOutdated()).isEqualTo(3);
                        assertThat(r.imageOutdated()).isEqualTo(3);
                    }));
            // the newer operator has looked at the deployment many times over by now, and turned nothing over
            await().during(Duration.ofSeconds(3))
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> uids().equals(before)
                            && servers().stream().allMatch(p -> p.getMetadata().getDeletionTimestamp() == null));
            assertThat(servers()).allSatisfy(p -> {
                assertThat(p.getMetadata().getLabels()).containsEntry(Labels.CONFIG_HASH, hash);
                assertThat(p.getSpec().getContainers().get(0).getImage()).isEqualTo(OLDER_DEFAULT);
            });
            assertThat(events("RolloutStep")).isEmpty();
            assertThat(sim.world().kubelet().terminations()).isEmpty();

            LoadGenerator load = new LoadGenerator(router, 3, 20, Duration.ofMillis(50)).start(Duration.ofMinutes(3));
            await().atMost(Duration.ofSeconds(5)).until(() -> load.count(LoadGenerator.Outcome.COMPLETED) >= 3);
            AtomicInteger fewestServing = new AtomicInteger(3);
            sampler.scheduleAtFixedRate(
                    () -> fewestServing.accumulateAndGet(router.selected().size(), Math::min),
                    0,
                    50,
                    TimeUnit.MILLISECONDS);

            client.resources(ModelDeployment.class)
                    .inNamespace(NS)
                    .withName("qwen")
                    .edit(md -> {
                        md.getMetadata().setAnnotations(Map.of(Annotations.REFRESH_HOOKS, "2026-11-30"));
                        return md;
                    });
            await().atMost(Duration.ofSeconds(120))
                    .until(() -> status().map(ModelDeploymentStatus::hooksRefreshedFor)
                            .filter("2026-11-30"::equals)
                            .isPresent());
            load.stop(Duration.ofSeconds(10));

            assertThat(load.count(LoadGenerator.Outcome.CUT)).isZero();
            assertThat(fewestServing.get())
                    .as("replicas serving at the worst moment")
                    .isGreaterThanOrEqualTo(2);
            assertThat(server()).hasValueSatisfying(r -> {
                assertThat(r.hookOutdated()).isZero();
                assertThat(r.imageOutdated()).isZero();
                assertThat(r.ready()).isEqualTo(3);
            });
            assertThat(servers()).hasSize(3).allSatisfy(p -> {
                assertThat(before).doesNotContain(p.getMetadata().getUid());
                assertThat(p.getMetadata().getAnnotations())
                        .containsEntry(Annotations.HOOK_REVISION, DrainHook.REVISION)
                        .containsEntry(Annotations.DEFAULT_IMAGE, NEWER_DEFAULT);
                assertThat(p.getSpec().getContainers().get(0).getImage()).isEqualTo(NEWER_DEFAULT);
                assertThat(p.getMetadata().getLabels())
                        .as("the spec did not change")
                        .containsEntry(Labels.CONFIG_HASH, hash);
            });
            assertThat(events("RolloutStep")).hasSize(3);
            assertThat(events(StatusNews.REASON_REFRESH_STARTED))
                    .singleElement()
                    .satisfies(e -> assertThat(e.getMessage())
                            .contains("3 Pod(s) with an older drain hook and 3 with an older default image"));
            assertThat(events(StatusNews.REASON_REFRESHED)).hasSize(1);
            assertThat(sim.world().kubelet().terminations())
                    .hasSize(3)
                    .allSatisfy(t -> assertThat(t.killed()).isFalse());
            assertThat(status().orElseThrow().hooksRefreshing()).isNull();
        } finally {
            newer.close();
        }
    }

    /**
     * An operator release whose default Envoy image differs writes the router's new rendering at once, tells what it
     * changes, and counts the router Pods still on the older image until its Deployment has replaced them.
     */
    @Test
    void anUpgradeThatChangesARouterImageDefaultSaysSoUntilTheRouterPodsAreReplaced() throws Exception {
        String olderProxy = "docker.io/envoyproxy/envoy:distroless-v1.33.2";
        SimOperator older = new SimOperator(
                client,
                sim.exec(),
                sim.routers(),
                Map.of("ebb.images.llm-d-router-proxy", olderProxy),
                DrainHook.SCRIPT);
        try {
            client.resource(deployment("qwen", "vLLM")
                            .namespace(NS)
                            .router("llm-d-router")
                            .role(role("server"))
                            .build())
                    .create();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> client.pods()
                                            .inNamespace(NS)
                                            .withName("qwen-router-0")
                                            .get()
                                    != null
                            && status().map(ModelDeploymentStatus::router)
                                    .filter(r -> r.imageOutdated() == 0)
                                    .isPresent());
        } finally {
            older.close();
        }

        SimOperator newer = new SimOperator(client, sim.exec(), sim.routers(), Map.of(), DrainHook.SCRIPT);
        try {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(status().map(ModelDeploymentStatus::router))
                        .hasValueSatisfying(r -> assertThat(r.imageOutdated()).isEqualTo(1));
                assertThat(events(ModelDeploymentReconciler.REASON_ROUTER_IMAGES_CHANGED))
                        .singleElement()
                        .satisfies(e -> assertThat(e.getMessage())
                                .startsWith("router images change: envoy-proxy " + olderProxy
                                        + " -> docker.io/envoyproxy/envoy:v1.33.2;"));
            });
            assertThat(client.apps()
                            .deployments()
                            .inNamespace(NS)
                            .withName("qwen-router")
                            .get()
                            .getSpec()
                            .getTemplate()
                            .getSpec()
                            .getContainers())
                    .filteredOn(c -> c.getName().equals("envoy-proxy"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.getImage()).isEqualTo("docker.io/envoyproxy/envoy:v1.33.2"));

            // the Deployment controller's part, which this world plays by hand: the old Pod goes, one from the new
            // template comes
            client.pods()
                    .inNamespace(NS)
                    .withName("qwen-router-0")
                    .withGracePeriod(0)
                    .delete();
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(status().map(ModelDeploymentStatus::router))
                            .hasValueSatisfying(
                                    r -> assertThat(r.imageOutdated()).isZero()));
        } finally {
            newer.close();
        }
    }
}
