package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.ServiceTarget;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A router rollout and then {@code router.replicas} 2 → 1, under streaming load, for one router kind, twice side by
 * side on the real control plane: through the router Pods Ebb renders, and through a copy of them with the Deployment
 * defaults (no preStop hook, the 30 s grace, the release's own SIGTERM, a rolling update of 25 % unavailable and 25 %
 * surge), as a router Deployment written by hand has them. Both arms get the same seeded load through their router's
 * Service, which clients reach as kube-proxy carries them; each arm's router Pods are rolled by the real Deployment
 * controller, removed from the Service by the real EndpointSlice controller, and terminated by the node's kubelet.
 */
final class RouterRollouts {
    /** The label that sets the copy's Pods apart from the operator's, so neither Deployment counts the other's. */
    static final String ARM = "test.ebb.dev/arm";

    private static final Duration TOKEN = Duration.ofMillis(100);
    private static final int CLIENTS = 4;

    enum Arm {
        EBB("Ebb's router Pods"),
        DEFAULTS("Deployment defaults");

        final String label;

        Arm(String label) {
            this.label = label;
        }
    }

    /** What one arm's clients saw, and how long its rollout and its scale-down took until the last old Pod was gone. */
    record Result(
            RouterKind kind,
            Arm arm,
            long completed,
            long cut,
            long rejected,
            Duration rollout,
            Duration scaleDown,
            List<String> cutWhy) {}

    private final ClusterWorld world;
    private final KubernetesClient admin;
    private final String namespace;

    RouterRollouts(ClusterWorld world) {
        this.world = world;
        this.admin = world.admin;
        this.namespace = world.namespace;
    }

    /**
     * Runs both arms of every kind at once, each with generations drawn from {@code shortest} to {@code longest}.
     */
    List<Result> run(List<RouterKind> kinds, Duration shortest, Duration longest) throws Exception {
        ExecutorService arms = Executors.newCachedThreadPool();
        try {
            List<CompletableFuture<Result>> runs = new ArrayList<>();
            for (RouterKind kind : kinds) {
                for (Arm arm : Arm.values()) {
                    runs.add(CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    return runArm(kind, arm, shortest, longest);
                                } catch (Exception e) {
                                    throw new IllegalStateException(
                                            kind.wireName() + ", " + arm.label + ": " + e.getMessage(), e);
                                }
                            },
                            arms));
                }
            }
            List<Result> results = new ArrayList<>();
            for (CompletableFuture<Result> run : runs) {
                results.add(run.get());
            }
            return results;
        } finally {
            arms.shutdownNow();
        }
    }

    private Result runArm(RouterKind kind, Arm arm, Duration shortest, Duration longest) throws Exception {
        String md = kind.wireName().replace("-router", "").replace("-gateway", "") + (arm == Arm.EBB ? "-ebb" : "-def");
        String engine = kind == RouterKind.SGLANG_GATEWAY ? "SGLang" : "vLLM";
        admin.resource(deployment(md, engine)
                        .namespace(namespace)
                        .router(kind.wireName(), arm == Arm.EBB ? 2 : 1)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        try {
            String router = Names.router(md);
            await(md + ": the operator's router written")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> admin.services()
                                            .inNamespace(namespace)
                                            .withName(router)
                                            .get()
                                    != null
                            && admin.apps()
                                            .deployments()
                                            .inNamespace(namespace)
                                            .withName(router)
                                            .get()
                                    != null);
            String deploymentName = arm == Arm.EBB ? router : copyWithDefaults(router, copyOf(md));
            Map<String, String> selector = admin.apps()
                    .deployments()
                    .inNamespace(namespace)
                    .withName(deploymentName)
                    .get()
                    .getSpec()
                    .getSelector()
                    .getMatchLabels();
            await(md + ": two router Pods in the Service, both engines ready")
                    .atMost(Duration.ofSeconds(90))
                    .untilAsserted(() -> {
                        assertThat(readyEndpoints(deploymentName))
                                .as(ClusterState.describe(admin, namespace))
                                .isEqualTo(2);
                        assertThat(world.podsOf(md).stream()
                                        .filter(p -> p.getMetadata().getLabels().containsKey(Labels.ROLE))
                                        .filter(Readiness::isPodReady)
                                        .count())
                                .isEqualTo(2);
                        assertThat(routersOf(selector))
                                .hasSize(2)
                                .allSatisfy(r -> assertThat(r.selected()).hasSize(2));
                    });
            Random lengths = new Random(17);
            int fewest = (int) (shortest.toMillis() / TOKEN.toMillis());
            int spread = (int) ((longest.toMillis() - shortest.toMillis()) / TOKEN.toMillis()) + 1;
            try (LoadGenerator load = new LoadGenerator(
                    new ServiceTarget(world.endpointSlices(), namespace, deploymentName),
                    CLIENTS,
                    () -> fewest + lengths.nextInt(spread),
                    TOKEN)) {
                load.start(Duration.ofMinutes(10));
                await(md + ": both router Pods streaming")
                        .atMost(Duration.ofSeconds(30))
                        .untilAsserted(() -> assertThat(routersOf(selector))
                                .as("requests so far: %s", load.requests())
                                .allSatisfy(r -> assertThat(r.clientsInFlight()).isPositive()));

                Instant rolled = Instant.now();
                List<String> before = podNames(selector);
                if (arm == Arm.EBB) {
                    admin.resources(ModelDeployment.class)
                            .inNamespace(namespace)
                            .withName(md)
                            .patch(
                                    PatchContext.of(PatchType.JSON_MERGE),
                                    "{\"spec\":{\"router\":{\"image\":\"registry.local/" + kind.wireName()
                                            + ":next\"}}}");
                } else {
                    admin.apps()
                            .deployments()
                            .inNamespace(namespace)
                            .withName(deploymentName)
                            .patch(
                                    PatchContext.of(PatchType.JSON_MERGE),
                                    "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"test.ebb.dev/rolled\":\"1\"}}}}}");
                }
                await(md + ": rolled, the old Pods gone")
                        .atMost(Duration.ofMinutes(4))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> podNames(selector).stream().noneMatch(before::contains)
                                && readyEndpoints(deploymentName) == 2);
                Duration rollout = Duration.between(rolled, Instant.now());

                Instant scaled = Instant.now();
                List<String> two = podNames(selector);
                if (arm == Arm.EBB) {
                    admin.resources(ModelDeployment.class)
                            .inNamespace(namespace)
                            .withName(md)
                            .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"router\":{\"replicas\":1}}}");
                } else {
                    admin.apps()
                            .deployments()
                            .inNamespace(namespace)
                            .withName(deploymentName)
                            .scale(1);
                }
                await(md + ": one router Pod left")
                        .atMost(Duration.ofMinutes(4))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> podNames(selector).size() == 1 && two.containsAll(podNames(selector)));
                Duration scaleDown = Duration.between(scaled, Instant.now());
                load.stop(longest.plusSeconds(30));
                List<LoadGenerator.Request> requests = load.requests();
                return new Result(
                        kind,
                        arm,
                        load.count(LoadGenerator.Outcome.COMPLETED),
                        load.count(LoadGenerator.Outcome.CUT),
                        load.count(LoadGenerator.Outcome.REJECTED),
                        rollout,
                        scaleDown,
                        requests.stream()
                                .filter(r -> r.outcome() != LoadGenerator.Outcome.COMPLETED)
                                .map(r -> r.outcome() + " " + r.why())
                                .toList());
            }
        } finally {
            admin.resources(ModelDeployment.class)
                    .inNamespace(namespace)
                    .withName(md)
                    .delete();
            admin.apps()
                    .deployments()
                    .inNamespace(namespace)
                    .withName(copyOf(md))
                    .delete();
            admin.services().inNamespace(namespace).withName(copyOf(md)).delete();
        }
    }

    /**
     * The operator's router Deployment and Service copied as a hand-written router would be: the same images,
     * arguments (but the drain flags) and volumes, none of the drain. The operator's own Pod stays as it is, apart.
     */
    private String copyWithDefaults(String router, String name) {
        Deployment rendered = admin.apps()
                .deployments()
                .inNamespace(namespace)
                .withName(router)
                .get();
        Map<String, String> labels =
                new HashMap<>(rendered.getSpec().getSelector().getMatchLabels());
        labels.put(ARM, "defaults");
        Deployment copy = new DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(namespace)
                .endMetadata()
                .withSpec(rendered.getSpec())
                .build();
        copy.getSpec().setReplicas(2);
        copy.getSpec().setStrategy(null);
        copy.getSpec().getSelector().setMatchLabels(labels);
        copy.getSpec().getTemplate().getMetadata().getLabels().put(ARM, "defaults");
        copy.getSpec().getTemplate().getSpec().setTerminationGracePeriodSeconds(null);
        for (Container container : copy.getSpec().getTemplate().getSpec().getContainers()) {
            container.setLifecycle(null);
            List<String> args =
                    new ArrayList<>(Optional.ofNullable(container.getArgs()).orElse(List.of()));
            int grace = args.indexOf("--shutdown-grace-period-secs");
            if (grace >= 0) {
                args.subList(grace, grace + 2).clear();
            }
            args.removeIf(a -> a.startsWith("--drain-timeout"));
            container.setArgs(args);
        }
        admin.resource(copy).create();
        Service service =
                admin.services().inNamespace(namespace).withName(router).get();
        admin.resource(new ServiceBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(namespace)
                        .endMetadata()
                        .withNewSpec()
                        .withSelector(labels)
                        .withPorts(service.getSpec().getPorts())
                        .endSpec()
                        .build())
                .create();
        return name;
    }

    private static String copyOf(String md) {
        return md + "-defaults";
    }

    private List<Pod> pods(Map<String, String> selector) {
        return admin.pods().inNamespace(namespace).withLabels(selector).list().getItems();
    }

    private List<String> podNames(Map<String, String> selector) {
        return pods(selector).stream().map(p -> p.getMetadata().getName()).toList();
    }

    private List<FakeRouter> routersOf(Map<String, String> selector) {
        return pods(selector).stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .flatMap(p -> world.node.routers().of(p).stream())
                .toList();
    }

    private long readyEndpoints(String service) {
        return world.endpointSlices().slicesOf(namespace, service).stream()
                .filter(s -> s.getEndpoints() != null)
                .flatMap(s -> s.getEndpoints().stream())
                .filter(e -> Boolean.TRUE.equals(e.getConditions().getReady()))
                .count();
    }
}
