package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.BundledScripts;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.RouterSpec;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What each router needs in front of a deployment, with the flags its own documentation gives. */
class RouterRendererTest {
    private static DesiredDeployment with(String engine, String router) {
        return deployment("qwen", engine)
                .namespace("team-a")
                .router(router)
                .role(role("server").port(8100))
                .desired();
    }

    private static Container router(List<HasMetadata> objects) {
        return RenderedRouter.only(objects, Deployment.class)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
    }

    @Test
    void noRouterRendersNothing() {
        assertThat(RouterRenderer.render(
                        deployment("qwen", "vLLM").role(role("server")).desired()))
                .isEmpty();
    }

    @Test
    void everyRouterGetsAnAccountThatMayOnlyReadPodsAndEverythingIsOwnedByTheDeployment() {
        for (String[] pair :
                new String[][] {{"vLLM", "llm-d-router"}, {"vLLM", "vllm-router"}, {"SGLang", "sglang-gateway"}}) {
            List<HasMetadata> objects = RouterRenderer.render(with(pair[0], pair[1]));

            assertThat(objects).allSatisfy(o -> {
                assertThat(o.getMetadata().getName()).isEqualTo("qwen-router");
                assertThat(o.getMetadata().getNamespace()).isEqualTo("team-a");
                assertThat(o.getMetadata().getOwnerReferences())
                        .singleElement()
                        .satisfies(r -> assertThat(r.getKind()).isEqualTo("ModelDeployment"));
            });
            assertThat(RenderedRouter.only(objects, Role.class).getRules())
                    .singleElement()
                    .satisfies(rule -> {
                        assertThat(rule.getResources()).containsExactly("pods");
                        assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
                    });
            assertThat(RenderedRouter.only(objects, RoleBinding.class).getSubjects())
                    .singleElement()
                    .satisfies(s -> assertThat(s.getName()).isEqualTo("qwen-router"));
            Deployment deployment = RenderedRouter.only(objects, Deployment.class);
            assertThat(deployment.getSpec().getTemplate().getSpec().getServiceAccountName())
                    .isEqualTo("qwen-router");
            // written last, so that the pass which writes it has written everything the router needs
            assertThat(objects.get(objects.size() - 1)).isSameAs(deployment);
            assertThat(router(objects).getSecurityContext().getReadOnlyRootFilesystem())
                    .isTrue();
            assertThat(router(objects).getImage()).isEqualTo("default/" + pair[1] + ":test");
        }
    }

    @Test
    void llmDsPickerDiscoversOnlyServingLeadersOnItsOwnAndReadsItsConfigFile() {
        List<HasMetadata> objects = RouterRenderer.render(with("SGLang", "llm-d-router"));

        assertThat(router(objects).getArgs())
                .contains(
                        "--endpoint-selector=serving.ebb.dev/deployment=qwen,serving.ebb.dev/serving=true,serving.ebb.dev/member-index=0",
                        "--endpoint-target-ports=8100",
                        "--config-file=/etc/ebb-router/epp-config.yaml",
                        "--metrics-port=9090");
        assertThat(RenderedRouter.only(objects, ConfigMap.class).getData()).containsKey("epp-config.yaml");
        assertThat(RenderedRouter.only(objects, Service.class).getSpec().getPorts())
                .extracting(p -> p.getPort())
                .containsExactly(8081, 9090);
    }

    @Test
    void vllmsRouterDiscoversPodsByLabelInTheDeploymentsNamespace() {
        List<HasMetadata> objects = RouterRenderer.render(with("vLLM", "vllm-router"));

        assertThat(router(objects).getArgs())
                .containsSubsequence("--service-discovery", "k8s")
                .containsSubsequence("--k8s-namespace", "team-a")
                .containsSubsequence(
                        "--k8s-label-selector",
                        "serving.ebb.dev/deployment=qwen,serving.ebb.dev/serving=true,serving.ebb.dev/member-index=0")
                .containsSubsequence("--k8s-port", "8100");
        assertThat(RenderedRouter.only(objects, Service.class).getSpec().getPorts())
                .extracting(p -> p.getPort())
                .containsExactly(8001);
    }

    @Test
    void sglangsGatewayKeepsItsLauncherAndSetsItsPortAndNamespaceWhichOtherwiseDefaultTo80AndEverywhere() {
        List<HasMetadata> objects = RouterRenderer.render(with("SGLang", "sglang-gateway"));

        assertThat(router(objects).getCommand()).isEmpty();
        assertThat(router(objects).getArgs())
                .containsSubsequence(
                        "--service-discovery",
                        "--selector",
                        Labels.DEPLOYMENT + "=qwen",
                        Labels.SERVING + "=true",
                        Labels.MEMBER_INDEX + "=0")
                .containsSubsequence("--service-discovery-port", "8100")
                .containsSubsequence("--service-discovery-namespace", "team-a");
    }

    @Test
    void theUsersImageReplicasAndExtraArgsAreTaken() {
        ModelDeployment md = deployment("qwen", "vLLM")
                .router("vllm-router")
                .role(role("server"))
                .build();
        ModelDeploymentSpec s = md.getSpec();
        md.setSpec(new ModelDeploymentSpec(
                s.model(),
                s.engine(),
                new RouterSpec("vllm-router", 3, "registry.local/router:1.2", List.of("--log-level", "debug"), null),
                s.roles()));
        DesiredDeployment desired = ((Resolution.Accepted) Specs.RESOLVER.resolve(md)).deployment();

        List<HasMetadata> objects = RouterRenderer.render(desired);

        assertThat(RenderedRouter.only(objects, Deployment.class).getSpec().getReplicas())
                .isEqualTo(3);
        assertThat(router(objects).getImage()).isEqualTo("registry.local/router:1.2");
        assertThat(router(objects).getArgs()).endsWith("--log-level", "debug");
    }

    /**
     * A rollout adds a router Pod before it takes one away, so clients keep the capacity they asked for; an eviction
     * (a node drain) may take one Pod at a time while others remain, and never the last.
     */
    @Test
    void aRouterRolloutSurgesAndAnEvictionNeverTakesTheLastRouterPod() {
        for (int replicas : new int[] {1, 2, 3}) {
            List<HasMetadata> objects = RouterRenderer.render(deployment("qwen", "vLLM")
                    .namespace("team-a")
                    .router("vllm-router", replicas)
                    .role(role("server"))
                    .desired());

            Deployment router = RenderedRouter.only(objects, Deployment.class);
            assertThat(router.getSpec().getStrategy().getType()).isEqualTo("RollingUpdate");
            assertThat(router.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable())
                    .isEqualTo(new IntOrString(0));
            assertThat(router.getSpec().getStrategy().getRollingUpdate().getMaxSurge())
                    .isEqualTo(new IntOrString(1));
            PodDisruptionBudget budget = RenderedRouter.only(objects, PodDisruptionBudget.class);
            assertThat(budget.getSpec().getSelector())
                    .isEqualTo(router.getSpec().getSelector());
            if (replicas == 1) {
                assertThat(budget.getSpec().getMinAvailable())
                        .as("one router Pod is never evicted")
                        .isEqualTo(new IntOrString(1));
                assertThat(budget.getSpec().getMaxUnavailable()).isNull();
            } else {
                assertThat(budget.getSpec().getMaxUnavailable())
                        .as(replicas + " router Pods leave one at a time")
                        .isEqualTo(new IntOrString(1));
                assertThat(budget.getSpec().getMinAvailable()).isNull();
            }
            // a router Pod that never became ready carries no stream and must not hold up a node drain
            assertThat(budget.getSpec().getUnhealthyPodEvictionPolicy()).isEqualTo("AlwaysAllow");
        }
    }

    /**
     * A leaving router Pod is given the deployment's drain: every kind settles first while the Service drops it, then
     * finishes its streams by its own mechanism, within a grace that leaves it time to exit.
     */
    @Test
    void aLeavingRouterPodCarriesItsStreamsWithinTheDeploymentsDrain() {
        for (String[] pair :
                new String[][] {{"vLLM", "llm-d-router"}, {"vLLM", "vllm-router"}, {"SGLang", "sglang-gateway"}}) {
            List<HasMetadata> byDefault = RouterRenderer.render(with(pair[0], pair[1]));
            List<HasMetadata> objects = RouterRenderer.render(deployment("qwen", pair[0])
                    .namespace("team-a")
                    .router(pair[1])
                    .routerDrainSeconds(600)
                    .role(role("server").port(8100))
                    .desired());

            assertThat(RenderedRouter.podSpec(byDefault).getTerminationGracePeriodSeconds())
                    .as(pair[1] + ": the roles' 240 s budget, settle and exit")
                    .isEqualTo(250L);
            assertThat(RenderedRouter.podSpec(objects).getTerminationGracePeriodSeconds())
                    .as(pair[1])
                    .isEqualTo(610L);
            switch (pair[1]) {
                case "llm-d-router" -> {
                    Container picker =
                            RenderedRouter.podSpec(objects).getContainers().get(0);
                    Container envoy =
                            RenderedRouter.podSpec(objects).getContainers().get(1);
                    assertThat(envoy.getLifecycle().getPreStop().getExec().getCommand())
                            .containsExactly(
                                    "/bin/bash",
                                    "/etc/ebb-router/drain-envoy.sh",
                                    "5",
                                    "600",
                                    "127.0.0.1",
                                    "19000",
                                    "http.http-8081.downstream_rq_active");
                    assertThat(RenderedRouter.only(objects, ConfigMap.class).getData())
                            .containsEntry("drain-envoy.sh", BundledScripts.load("ebb/drain-envoy.sh"));
                    assertThat(clientListenerGauge(
                                    RenderedRouter.only(objects, ConfigMap.class)
                                            .getData()
                                            .get("envoy.yaml"),
                                    8081))
                            .as(
                                    "the gauge the hook waits on is the one Envoy names after the client listener's stat_prefix")
                            .isEqualTo(envoy.getLifecycle()
                                    .getPreStop()
                                    .getExec()
                                    .getCommand()
                                    .get(6));
                    // the picker takes Envoy's streams for as long as Envoy may send them, and has SIGTERM at once
                    assertThat(picker.getArgs()).contains("--drain-timeout=605s");
                    assertThat(picker.getLifecycle()).isNull();
                }
                case "vllm-router" ->
                    assertThat(router(objects)
                                    .getLifecycle()
                                    .getPreStop()
                                    .getExec()
                                    .getCommand())
                            .containsExactly("sleep", "5");
                default -> {
                    assertThat(router(objects)
                                    .getLifecycle()
                                    .getPreStop()
                                    .getExec()
                                    .getCommand())
                            .containsExactly("sleep", "5");
                    assertThat(router(objects).getArgs()).containsSequence("--shutdown-grace-period-secs", "600");
                }
            }
        }
    }

    /** Envoy names a connection manager's in-flight gauge http.<stat_prefix>.downstream_rq_active. */
    private static String clientListenerGauge(String envoyYaml, int port) {
        try {
            JsonNode listeners = new YAMLMapper()
                    .readTree(envoyYaml)
                    .path("static_resources")
                    .path("listeners");
            for (JsonNode listener : listeners) {
                if (listener.path("address")
                                .path("socket_address")
                                .path("port_value")
                                .asInt()
                        == port) {
                    String prefix = listener.path("filter_chains")
                            .path(0)
                            .path("filters")
                            .path(0)
                            .path("typed_config")
                            .path("stat_prefix")
                            .asText();
                    return "http." + prefix + ".downstream_rq_active";
                }
            }
            throw new AssertionError("no listener on port " + port + " in envoy.yaml");
        } catch (JsonProcessingException e) {
            throw new AssertionError("envoy.yaml does not parse", e);
        }
    }
}
