package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterRenderer;
import dev.ebb.operator.sim.RecordedEvents;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The router's objects as the real API server keeps them: what it adds (defaults, a cluster IP, the Deployment
 * controller's revision and status) is no difference, so the packaged operator writes nothing pass after pass; what
 * is deleted or edited by hand is put back. And the router's Pods as the real Deployment controller rolls them.
 */
class ClusterRouterObjectsIT {
    private static final String NS = "router-objects";
    private static final List<Class<? extends HasMetadata>> KINDS = List.of(
            ServiceAccount.class,
            Role.class,
            RoleBinding.class,
            ConfigMap.class,
            Deployment.class,
            PodDisruptionBudget.class,
            Service.class);
    private static ClusterWorld world;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() throws Exception {
        world = ClusterWorld.start(NS, NS);
        admin = world.admin;
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    /** Every router kind at once, each in front of a deployment of its own. */
    @Test
    void eachRouterIsLeftAsTheApiServerKeepsItAndPutBackWhenEditedByHand() {
        Map<String, String> engines = Map.of("llm-d-router", "vLLM", "vllm-router", "vLLM", "sglang-gateway", "SGLang");
        Map<String, String> routers = new HashMap<>();
        engines.forEach((kind, engine) -> {
            String md = kind.replace("-router", "").replace("-gateway", "") + "-kept";
            routers.put(md, Names.router(md));
            admin.resource(deployment(md, engine)
                            .namespace(NS)
                            .router(kind)
                            .role(role("server"))
                            .build())
                    .create();
        });
        try {
            await("every router's objects written and its Pod placed")
                    .atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> {
                        routers.values()
                                .forEach(router -> assertThat(versions(router))
                                        .as(ClusterState.describe(admin, NS))
                                        .containsKeys(
                                                "ServiceAccount",
                                                "Role",
                                                "RoleBinding",
                                                "Deployment",
                                                "PodDisruptionBudget",
                                                "Service"));
                        assertThat(admin.pods()
                                        .inNamespace(NS)
                                        .withLabel(RouterRenderer.COMPONENT, RouterRenderer.COMPONENT_ROUTER)
                                        .list()
                                        .getItems())
                                .filteredOn(p -> p.getSpec().getNodeName() != null)
                                .hasSize(routers.size());
                    });
            Map<String, Map<String, String>> written = new HashMap<>();
            routers.values().forEach(router -> written.put(router, versions(router)));
            // the replicas turning Ready, the Deployment controller's status writes and these edits bring passes
            // meanwhile
            await("every engine Pod ready")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> routers.keySet().stream()
                            .allMatch(md -> world.podsOf(md).stream()
                                    .filter(p -> p.getMetadata().getLabels().containsKey(Labels.ROLE))
                                    .anyMatch(Readiness::isPodReady)));
            routers.keySet().forEach(ClusterRouterObjectsIT::touchEachEnginePod);
            await("nothing written again over passes")
                    .during(Duration.ofSeconds(5))
                    .atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> {
                        assertThat(repairs()).as("repairs told").isEmpty();
                        routers.values()
                                .forEach(router -> assertThat(versions(router)).isEqualTo(written.get(router)));
                    });

            routers.values().forEach(router -> {
                admin.rbac().roleBindings().inNamespace(NS).withName(router).delete();
                admin.apps().deployments().inNamespace(NS).withName(router).edit(d -> {
                    d.getSpec().setReplicas(3);
                    return d;
                });
            });

            await("put back").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                for (String router : routers.values()) {
                    assertThat(admin.rbac()
                                    .roleBindings()
                                    .inNamespace(NS)
                                    .withName(router)
                                    .get())
                            .isNotNull();
                    assertThat(admin.apps()
                                    .deployments()
                                    .inNamespace(NS)
                                    .withName(router)
                                    .get()
                                    .getSpec()
                                    .getReplicas())
                            .isEqualTo(1);
                    assertThat(repairs())
                            .filteredOn(m -> m.contains(" " + router + " "))
                            .containsExactlyInAnyOrder(
                                    "RoleBinding " + router
                                            + " was missing and is created again, as the router needs it",
                                    "Deployment " + router
                                            + " differed from what the operator renders for it and is put back, as the router needs it");
                }
            });
        } finally {
            routers.keySet()
                    .forEach(md -> admin.resources(ModelDeployment.class)
                            .inNamespace(NS)
                            .withName(md)
                            .delete());
        }
    }

    /**
     * A router whose image changes is rolled by the real Deployment controller as rendered: a new Pod is ready before
     * an old one leaves, so the router never has fewer ready Pods than it asks for; the change is told and counted
     * until every Pod runs the new image. Each old Pod leaves through its preStop settle.
     */
    @Test
    void aRouterImageChangeRollsWithNeverFewerReadyRouterPodsAndIsTold() throws Exception {
        String md = "rolled";
        String router = Names.router(md);
        String newImage = "registry.local/vllm-router:next";
        // four, since the Deployment defaults (25% unavailable, rounded down) would keep two or three whole as well
        admin.resource(deployment(md, "vLLM")
                        .namespace(NS)
                        .router("vllm-router", 4)
                        .role(role("server"))
                        .build())
                .create();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        try {
            await("four router Pods ready")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> readyRouterPods(router).size() == 4);
            AtomicInteger fewestReady = new AtomicInteger(4);
            sampler.scheduleAtFixedRate(
                    () -> fewestReady.accumulateAndGet(readyRouterPods(router).size(), Math::min),
                    0,
                    50,
                    TimeUnit.MILLISECONDS);

            // a merge patch, as kubectl patch sends it: no resourceVersion, so the operator's own writes meanwhile do
            // not conflict
            admin.resources(ModelDeployment.class)
                    .inNamespace(NS)
                    .withName(md)
                    .patch(
                            PatchContext.of(PatchType.JSON_MERGE),
                            "{\"spec\":{\"router\":{\"image\":\"" + newImage + "\"}}}");

            await("every router Pod replaced").atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
                List<Pod> pods = routerPods(router);
                assertThat(pods)
                        .as(ClusterState.describe(admin, NS))
                        .hasSize(4)
                        .allSatisfy(p -> assertThat(
                                        p.getSpec().getContainers().get(0).getImage())
                                .isEqualTo(newImage));
                assertThat(admin.resources(ModelDeployment.class)
                                .inNamespace(NS)
                                .withName(md)
                                .get()
                                .getStatus()
                                .router()
                                .imageOutdated())
                        .isZero();
            });
            sampler.shutdownNow();
            assertThat(fewestReady.get())
                    .as("ready router Pods at the worst moment")
                    .isEqualTo(4);
            assertThat(RecordedEvents.occurrences(admin, NS))
                    .as(ClusterState.describe(admin, NS))
                    .filteredOn(e -> "RouterImagesChanged".equals(e.getReason())
                            && e.getInvolvedObject().getName().equals(md))
                    .singleElement()
                    .satisfies(e -> assertThat(e.getMessage())
                            .contains("router " + "lmcache/lmstack-router:v0.1.12 -> " + newImage));
        } finally {
            sampler.shutdownNow();
            admin.resources(ModelDeployment.class).inNamespace(NS).withName(md).delete();
        }
    }

    /**
     * Every router kind rolled and then scaled 2 → 1 under streaming load, through Ebb's router Pods and through the
     * same router with the Deployment defaults, all at once ({@link RouterRollouts}).
     */
    @Test
    void eachRouterRollsAndShrinksUnderLoadWithoutCuttingAStreamWhereTheDeploymentDefaultsCutEnvoys() throws Exception {
        // generations of 3 to 10 s: longer than the settle, shorter than any grace, so only a router's own SIGTERM cuts
        List<RouterRollouts.Result> results = new RouterRollouts(world)
                .run(
                        List.of(RouterKind.LLM_D_ROUTER, RouterKind.VLLM_ROUTER, RouterKind.SGLANG_GATEWAY),
                        Duration.ofSeconds(3),
                        Duration.ofSeconds(10));

        assertThat(results)
                .filteredOn(r -> r.arm() == RouterRollouts.Arm.EBB)
                .hasSize(3)
                .allSatisfy(r -> {
                    assertThat(r.cut())
                            .as(r.kind().wireName() + " through Ebb's router Pods: " + r.cutWhy())
                            .isZero();
                    assertThat(r.rejected())
                            .as(r.kind().wireName() + " through Ebb's router Pods: " + r.cutWhy())
                            .isZero();
                    assertThat(r.completed()).as(r.kind().wireName()).isGreaterThanOrEqualTo(8);
                });
        // Envoy exits at once on SIGTERM: each old Pod the defaults take away cuts what it carries
        assertThat(results)
                .filteredOn(r -> r.arm() == RouterRollouts.Arm.DEFAULTS && r.kind() == RouterKind.LLM_D_ROUTER)
                .singleElement()
                .satisfies(r -> assertThat(r.cut())
                        .as("streams the Deployment defaults cut")
                        .isGreaterThanOrEqualTo(2));
    }

    private static List<Pod> routerPods(String router) {
        return admin
                .pods()
                .inNamespace(NS)
                .withLabel(RouterRenderer.COMPONENT, RouterRenderer.COMPONENT_ROUTER)
                .list()
                .getItems()
                .stream()
                .filter(p -> p.getMetadata().getName().startsWith(router + "-"))
                .toList();
    }

    private static List<Pod> readyRouterPods(String router) {
        return routerPods(router).stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(Readiness::isPodReady)
                .toList();
    }

    /**
     * What each router object's writers changed, by kind: its resourceVersion, or for the Deployment, whose status the
     * Deployment controller keeps writing, its generation, which only a change of its spec moves.
     */
    private static Map<String, String> versions(String router) {
        Map<String, String> versions = new HashMap<>();
        for (Class<? extends HasMetadata> kind : KINDS) {
            HasMetadata object =
                    admin.resources(kind).inNamespace(NS).withName(router).get();
            if (object != null) {
                versions.put(
                        object.getKind(),
                        object instanceof Deployment
                                ? "generation " + object.getMetadata().getGeneration()
                                : object.getMetadata().getResourceVersion());
            }
        }
        return versions;
    }

    private static void touchEachEnginePod(String md) {
        world.podsOf(md)
                .forEach(pod -> admin.pods()
                        .inNamespace(NS)
                        .withName(pod.getMetadata().getName())
                        .edit(p -> {
                            p.getMetadata()
                                    .getAnnotations()
                                    .put("test.ebb.dev/touched", Long.toString(System.nanoTime()));
                            return p;
                        }));
    }

    private static List<String> repairs() {
        return RecordedEvents.occurrences(admin, NS).stream()
                .filter(e -> "RouterObjectRepaired".equals(e.getReason()))
                .map(e -> e.getMessage())
                .collect(Collectors.toList());
    }
}
