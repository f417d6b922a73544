package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.retire.RetirementMachine;
import dev.ebb.operator.retire.RetirementMachineTest;
import dev.ebb.operator.retire.RetirementState;
import dev.ebb.operator.sim.RecordedEvents;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.arc.Arc;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The operator running in Quarkus against the fabric8 mock API server in CRUD mode. */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ModelDeploymentReconcilerIT {
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Inject
    KubernetesClient client;

    @Inject
    PodRenderer renderer;

    @Inject
    DrainTimelines timelines;

    @Inject
    RetirementMachine machine;

    private List<String> podNames(String namespace, String deployment) {
        return client.pods().inNamespace(namespace).withLabel(Labels.DEPLOYMENT, deployment).list().getItems().stream()
                .map(p -> p.getMetadata().getName())
                .sorted()
                .toList();
    }

    private ModelDeployment fetch(String namespace, String name) {
        return client.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .withName(name)
                .get();
    }

    private Optional<Condition> condition(String namespace, String name, String type) {
        ModelDeployment md = fetch(namespace, name);
        return md == null || md.getStatus() == null
                ? Optional.empty()
                : Conditions.find(md.getStatus().conditions(), type);
    }

    /** The condition as written; until it is, an AssertionError, so that untilAsserted waits for it. */
    private Condition written(String namespace, String name, String type) {
        return condition(namespace, name, type)
                .orElseThrow(() -> new AssertionError("no " + type + " condition on " + name + " yet"));
    }

    private List<Event> events(String namespace, String name, String reason) {
        return RecordedEvents.occurrences(client, namespace).stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason()))
                .toList();
    }

    @Test
    void theRendererTheDrainTimelineCalculatorAndTheRetirementMachineAreApplicationScopedBeans() {
        for (Class<?> core : List.of(PodRenderer.class, DrainTimelines.class, RetirementMachine.class)) {
            assertThat(Arc.container().instance(core).getBean().getScope())
                    .as(core.getSimpleName())
                    .isEqualTo(ApplicationScoped.class);
        }
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server")).desired();
        assertThat(renderer.render(new MemberSlot(d, d.roles().get(0), 0, 0), "h")
                        .getMetadata()
                        .getName())
                .isEqualTo("qwen-server-r0-m0");
        assertThat(timelines
                        .of(Optional.empty(), Engine.VLLM, RoleKind.Server, false, false, false)
                        .grace())
                .contains(RoleSpec.DEFAULT_GRACE_SECONDS);
        assertThat(machine.cancel(RetirementMachineTest.draining(), Instant.EPOCH)
                        .retirement()
                        .state())
                .isEqualTo(RetirementState.Aborted);
    }

    /**
     * One PodDisruptionBudget per role, kept as rendered: an edit by hand is put back, a change of the role's
     * maintenance is written, and a role that left the spec takes its budget with its last Pod.
     */
    @Test
    void eachRoleHasADisruptionBudgetKeptAsRenderedAndGoneWithTheRolesLastPod() {
        String ns = "budgets";
        client.resource(deployment("qwen", "vLLM")
                        .namespace(ns)
                        .role(role("server").replicas(2))
                        .role(role("batch"))
                        .build())
                .create();
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(budget(ns, "qwen-server")).isPresent().get().satisfies(b -> {
                assertThat(b.getSpec().getMinAvailable().getIntVal()).isEqualTo(2);
                assertThat(b.getSpec().getSelector().getMatchLabels()).doesNotContainKey(Labels.SERVING);
            });
            assertThat(budget(ns, "qwen-batch")).isPresent();
        });

        client.policy()
                .v1()
                .podDisruptionBudget()
                .inNamespace(ns)
                .withName("qwen-server")
                .edit(b -> new PodDisruptionBudgetBuilder(b)
                        .editSpec()
                        .withMinAvailable(new IntOrString(0))
                        .endSpec()
                        .build());
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(budget(ns, "qwen-server")
                                .orElseThrow()
                                .getSpec()
                                .getMinAvailable()
                                .getIntVal())
                        .as("put back")
                        .isEqualTo(2));

        client.resources(ModelDeployment.class).inNamespace(ns).withName("qwen").edit(md -> {
            md.getSpec()
                    .roles()
                    .set(0, role("server").replicas(2).disruption(1, "Evict").build());
            md.getSpec().roles().remove(1);
            return md;
        });
        // the dropped role's replica retires through the protocol first
        await().atMost(PATIENCE.multipliedBy(3)).untilAsserted(() -> {
            assertThat(budget(ns, "qwen-server").orElseThrow().getSpec()).satisfies(spec -> {
                assertThat(spec.getMinAvailable().getIntVal()).isEqualTo(1);
                assertThat(spec.getSelector().getMatchLabels()).containsEntry(Labels.SERVING, Labels.SERVING_YES);
            });
            assertThat(podNames(ns, "qwen")).noneMatch(name -> name.startsWith("qwen-batch"));
            assertThat(budget(ns, "qwen-batch")).as("the dropped role's budget").isEmpty();
        });
    }

    private Optional<PodDisruptionBudget> budget(String namespace, String name) {
        return Optional.ofNullable(client.policy()
                .v1()
                .podDisruptionBudget()
                .inNamespace(namespace)
                .withName(name)
                .get());
    }

    /**
     * The hook's script lives in one immutable ConfigMap per deployment and revision, never in a Pod; what the operator's
     * client reads of it is this release's one copy. Deleted by hand, it is put back with a Warning; a revision no Pod
     * mounts is removed.
     */
    @Test
    void theHookScriptIsOneConfigMapPerDeploymentPutBackWhenDeletedAndAnUnmountedRevisionGoes() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("shared-hook")
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(podNames("shared-hook", "qwen")).hasSize(2));
        String name = "qwen-drain-hook-" + DrainHook.REVISION;

        for (Pod pod : client.pods().inNamespace("shared-hook").list().getItems()) {
            assertThat(pod.getSpec()
                            .getContainers()
                            .get(0)
                            .getLifecycle()
                            .getPreStop()
                            .getExec()
                            .getCommand())
                    .as(pod.getMetadata().getName())
                    .doesNotContain(DrainHook.SCRIPT);
        }
        ConfigMap script =
                client.configMaps().inNamespace("shared-hook").withName(name).get();
        assertThat(script.getData().get(DrainHook.FILE)).isSameAs(DrainHook.SCRIPT);
        String ownerUid = script.getMetadata().getOwnerReferences().get(0).getUid();

        client.resource(script).delete();
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(client.configMaps()
                            .inNamespace("shared-hook")
                            .withName(name)
                            .get())
                    .isNotNull();
            assertThat(events("shared-hook", "qwen", ModelDeploymentReconciler.REASON_HOOK_SCRIPT_RESTORED))
                    .isNotEmpty();
        });

        client.resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("qwen-drain-hook-0000000000")
                        .withNamespace("shared-hook")
                        .withLabels(Map.of(Labels.DEPLOYMENT, "qwen", Labels.DRAIN_HOOK_REVISION, "0000000000"))
                        .addNewOwnerReference()
                        .withApiVersion("serving.ebb.dev/v1alpha1")
                        .withKind("ModelDeployment")
                        .withName("qwen")
                        .withUid(ownerUid)
                        .withController(true)
                        .endOwnerReference()
                        .endMetadata()
                        .withData(Map.of(DrainHook.FILE, "print('older')"))
                        .build())
                .create();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(client.configMaps()
                                .inNamespace("shared-hook")
                                .withName("qwen-drain-hook-0000000000")
                                .get())
                        .isNull());
    }

    /** What a kubelet would report: the engine container started and the Pod is Ready. */
    private void markReady(String namespace, String deployment) {
        for (Pod pod : client.pods()
                .inNamespace(namespace)
                .withLabel(Labels.DEPLOYMENT, deployment)
                .list()
                .getItems()) {
            pod.setStatus(new PodStatusBuilder()
                    .withPhase("Running")
                    .addNewCondition()
                    .withType("Ready")
                    .withStatus("True")
                    .endCondition()
                    .addNewContainerStatus()
                    .withName("main")
                    .withContainerID("containerd://" + pod.getMetadata().getUid())
                    .withRestartCount(0)
                    .withReady(true)
                    .endContainerStatus()
                    .build());
            client.pods().resource(pod).updateStatus();
        }
    }

    /** Edits as kubectl does: a status write of the operator in between makes the edit conflict, and it is retried. */
    @Test
    void createsReplicasAndServiceThenReportsReadinessAndScaleUp() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("create")
                        .role(role("server").replicas(2))
                        .build())
                .create();

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(podNames("create", "qwen"))
                        .containsExactly("qwen-server-r0-m0", "qwen-server-r1-m0"));
        assertThat(client.services()
                        .inNamespace("create")
                        .withName("qwen-server")
                        .get())
                .isNotNull();
        await().atMost(PATIENCE).untilAsserted(() -> {
            ModelDeployment md = fetch("create", "qwen");
            assertThat(md.getStatus()).isNotNull();
            assertThat(md.getStatus().phase()).isEqualTo("Starting");
            assertThat(md.getStatus().roles()).singleElement().satisfies(r -> {
                assertThat(r.desired()).isEqualTo(2);
                assertThat(r.current()).isEqualTo(2);
                assertThat(r.ready()).isZero();
            });
        });

        markReady("create", "qwen");
        await().atMost(PATIENCE).untilAsserted(() -> {
            ModelDeployment md = fetch("create", "qwen");
            assertThat(md.getStatus().phase()).isEqualTo("Ready");
            assertThat(md.getStatus().rolesSummary()).isEqualTo("server 2/2");
            assertThat(md.getStatus().observedGeneration())
                    .isEqualTo(md.getMetadata().getGeneration());
        });

        Specs.scale(client, "create", "qwen", "server", 3);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(podNames("create", "qwen"))
                        .containsExactly("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0"));
        assertThat(events("create", "qwen", "PodCreated")).hasSize(3);
    }

    @Test
    void scaleDownOfAReplicaThatRanGoesThroughTheRetirementProtocol() {
        client.resource(deployment("qwen", "SGLang")
                        .namespace("shrink")
                        .role(role("server").replicas(3))
                        .build())
                .create();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(podNames("shrink", "qwen")).hasSize(3));
        markReady("shrink", "qwen");

        Specs.scale(client, "shrink", "qwen", "server", 1);

        // no endpoints controller runs here, so no EndpointSlice of the role's Service is known: whether one still
        // lists the replica cannot be told, the withdrawal is not proven, and nothing is deleted
        await().atMost(PATIENCE).untilAsserted(() -> {
            Condition upToDate = written("shrink", "qwen", "ReplicasUpToDate");
            assertThat(upToDate.getStatus()).isEqualTo("False");
            assertThat(upToDate.getReason()).isEqualTo(StatusAggregator.REASON_SCALING_DOWN);
            Condition retiring = written("shrink", "qwen", Conditions.RETIREMENT_PROGRESSING);
            assertThat(retiring.getStatus()).isEqualTo("True");
            assertThat(retiring.getReason()).isEqualTo("EndpointsUnknown");
            assertThat(retiring.getMessage())
                    .startsWith("2 retirements under way")
                    .contains("replica 1 of role server (ScaleDown, Withdrawing)")
                    .contains("replica 2 of role server (ScaleDown, Withdrawing)");
            assertThat(events("shrink", "qwen", "RetirementStarted")).isNotEmpty();
        });
        assertThat(podNames("shrink", "qwen")).hasSize(3);
        assertThat(List.of("qwen-server-r1-m0", "qwen-server-r2-m0"))
                .as("both leave at once")
                .allSatisfy(name -> assertThat(client.pods()
                                .inNamespace("shrink")
                                .withName(name)
                                .get()
                                .getMetadata()
                                .getLabels())
                        .containsEntry(Labels.SERVING, "false"));
    }

    @Test
    void aRouterIsDeployedInFrontReportedUntilReadyAndRemovedWithTheSpecsRouter() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("routed")
                        .router("vllm-router")
                        .role(role("server"))
                        .build())
                .create();

        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(client.apps()
                            .deployments()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNotNull();
            assertThat(client.services()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNotNull();
            assertThat(client.serviceAccounts()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNotNull();
            assertThat(client.rbac()
                            .roles()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNotNull();
            assertThat(client.rbac()
                            .roleBindings()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNotNull();
            Condition routerReady = written("routed", "qwen", Conditions.ROUTER_READY);
            assertThat(routerReady.getStatus()).isEqualTo("False");
            assertThat(fetch("routed", "qwen").getStatus().router())
                    .isEqualTo(new RouterStatus("vllm-router", "http://qwen-router.routed.svc:8001", false, 0));
            // a router still starting is the operator at work, not a fault
            assertThat(events("routed", "qwen", "RouterNotReady"))
                    .singleElement()
                    .satisfies(e -> assertThat(e.getType()).isEqualTo("Normal"));
        });

        // what the Deployment controller would report once the router's Pod is ready
        Deployment router = client.apps()
                .deployments()
                .inNamespace("routed")
                .withName("qwen-router")
                .get();
        router.setStatus(new DeploymentStatusBuilder()
                .withReplicas(1)
                .withReadyReplicas(1)
                .build());
        client.apps().deployments().resource(router).updateStatus();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(written("routed", "qwen", Conditions.ROUTER_READY)
                                .getStatus())
                        .isEqualTo("True"));

        client.resources(ModelDeployment.class)
                .inNamespace("routed")
                .withName("qwen")
                .edit(md -> {
                    ModelDeploymentSpec s = md.getSpec();
                    md.setSpec(new ModelDeploymentSpec(s.model(), s.engine(), null, s.roles()));
                    return md;
                });
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(client.apps()
                            .deployments()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNull();
            assertThat(client.services()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNull();
            assertThat(client.rbac()
                            .roles()
                            .inNamespace("routed")
                            .withName("qwen-router")
                            .get())
                    .isNull();
            assertThat(condition("routed", "qwen", Conditions.ROUTER_READY)).isEmpty();
            assertThat(fetch("routed", "qwen").getStatus().router()).isNull();
        });
    }

    /** Every object of the router is kept as rendered between renderings, and each repair is told. */
    @Test
    void aRouterObjectDeletedOrEditedByHandIsPutBackAndTold() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("mended")
                        .router("llm-d-router")
                        .role(role("server"))
                        .build())
                .create();
        // the Deployment is the last of the router's objects to be written
        await().atMost(PATIENCE)
                .until(() -> client.apps()
                                .deployments()
                                .inNamespace("mended")
                                .withName("qwen-router")
                                .get()
                        != null);
        Map<String, String> files = client.configMaps()
                .inNamespace("mended")
                .withName("qwen-router")
                .get()
                .getData();
        String picker = client.apps()
                .deployments()
                .inNamespace("mended")
                .withName("qwen-router")
                .get()
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getImage();

        client.configMaps().inNamespace("mended").withName("qwen-router").delete();
        client.rbac()
                .roleBindings()
                .inNamespace("mended")
                .withName("qwen-router")
                .delete();
        client.policy()
                .v1()
                .podDisruptionBudget()
                .inNamespace("mended")
                .withName("qwen-router")
                .delete();
        client.apps()
                .deployments()
                .inNamespace("mended")
                .withName("qwen-router")
                .edit(d -> {
                    d.getSpec().setReplicas(5);
                    d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("somebody/else:latest");
                    return d;
                });
        client.services().inNamespace("mended").withName("qwen-router").edit(svc -> {
            svc.getSpec().setSelector(Map.of("app", "something-else"));
            return svc;
        });

        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(client.configMaps()
                            .inNamespace("mended")
                            .withName("qwen-router")
                            .get())
                    .isNotNull()
                    .satisfies(cm -> assertThat(cm.getData()).isEqualTo(files));
            assertThat(client.rbac()
                            .roleBindings()
                            .inNamespace("mended")
                            .withName("qwen-router")
                            .get())
                    .isNotNull();
            assertThat(client.policy()
                            .v1()
                            .podDisruptionBudget()
                            .inNamespace("mended")
                            .withName("qwen-router")
                            .get())
                    .isNotNull();
            Deployment router = client.apps()
                    .deployments()
                    .inNamespace("mended")
                    .withName("qwen-router")
                    .get();
            assertThat(router.getSpec().getReplicas()).isEqualTo(1);
            assertThat(router.getSpec()
                            .getTemplate()
                            .getSpec()
                            .getContainers()
                            .get(0)
                            .getImage())
                    .isEqualTo(picker);
            assertThat(client.services()
                            .inNamespace("mended")
                            .withName("qwen-router")
                            .get()
                            .getSpec()
                            .getSelector())
                    .containsEntry(Labels.DEPLOYMENT, "qwen");
            assertThat(events("mended", "qwen", "RouterObjectRepaired"))
                    .extracting(Event::getMessage)
                    .contains(
                            "ConfigMap qwen-router was missing and is created again, as the router needs it",
                            "RoleBinding qwen-router was missing and is created again, as the router needs it",
                            "PodDisruptionBudget qwen-router was missing and is created again, as the router needs it",
                            "Deployment qwen-router differed from what the operator renders for it and is put back, as the router needs it",
                            "Service qwen-router differed from what the operator renders for it and is put back, as the router needs it");
        });
    }

    @Test
    void scaleDownRemovesReplicasThatNeverRanDirectly() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("pending")
                        .role(role("server").replicas(3))
                        .build())
                .create();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(podNames("pending", "qwen")).hasSize(3));

        Specs.scale(client, "pending", "qwen", "server", 1);

        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(podNames("pending", "qwen")).containsExactly("qwen-server-r0-m0");
            assertThat(events("pending", "qwen", "NeverRanReplicaRemoved")).hasSize(2);
        });
    }

    @Test
    void deletedPodIsReplacedAtTheLowestFreeOrdinal() {
        client.resource(deployment("qwen", "vLLM")
                        .namespace("heal")
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(podNames("heal", "qwen")).hasSize(2));
        String oldUid = client.pods()
                .inNamespace("heal")
                .withName("qwen-server-r0-m0")
                .get()
                .getMetadata()
                .getUid();

        client.pods().inNamespace("heal").withName("qwen-server-r0-m0").delete();

        await().atMost(PATIENCE).untilAsserted(() -> {
            Pod replaced = client.pods()
                    .inNamespace("heal")
                    .withName("qwen-server-r0-m0")
                    .get();
            assertThat(replaced).isNotNull();
            assertThat(replaced.getMetadata().getUid()).isNotEqualTo(oldUid);
        });
        assertThat(podNames("heal", "qwen")).containsExactly("qwen-server-r0-m0", "qwen-server-r1-m0");
    }

    @Test
    void multiPodReplicaGetsAHeadlessServiceForItsMembers() {
        client.resource(deployment("big", "SGLang")
                        .namespace("multi")
                        .role(role("tp").size(2))
                        .build())
                .create();

        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(podNames("multi", "big")).containsExactly("big-tp-r0-m0", "big-tp-r0-m1");
            assertThat(client.services()
                            .inNamespace("multi")
                            .withName("big-tp-r0")
                            .get()
                            .getSpec()
                            .getClusterIP())
                    .isEqualTo("None");
        });
    }

    @Test
    void badResourceIsRefusedWithAConditionAndAnEventNamingTheFieldAndNothingIsCreated() {
        client.resource(deployment("bad", "TGI")
                        .namespace("refuse")
                        .role(role("server").size(0))
                        .build())
                .create();

        await().atMost(PATIENCE).untilAsserted(() -> {
            ModelDeployment md = fetch("refuse", "bad");
            assertThat(md.getStatus()).isNotNull();
            assertThat(md.getStatus().phase()).isEqualTo("Degraded");
            Condition ready =
                    Conditions.find(md.getStatus().conditions(), "Ready").orElseThrow(AssertionError::new);
            assertThat(ready.getReason()).isEqualTo("InvalidSpec");
            assertThat(ready.getMessage())
                    .contains("spec.engine.name: unsupported value \"TGI\"")
                    .contains("spec.roles[0].size");
            assertThat(events("refuse", "bad", "InvalidSpec")).singleElement().satisfies(e -> {
                assertThat(e.getType()).isEqualTo("Warning");
                assertThat(e.getMessage()).contains("spec.engine.name");
            });
        });
        assertThat(podNames("refuse", "bad")).isEmpty();
        assertThat(client.services().inNamespace("refuse").list().getItems()).isEmpty();
    }

    @Test
    void deletingTheModelDeploymentRemovesWhatItOwns() {
        client.resource(deployment("gone", "vLLM")
                        .namespace("remove")
                        .role(role("server").replicas(2).size(2))
                        .build())
                .create();
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(podNames("remove", "gone")).hasSize(4);
            assertThat(fetch("remove", "gone").getStatus())
                    .isNotNull()
                    .satisfies(st -> assertThat(st.roles().get(0).current()).isEqualTo(2));
        });

        client.resources(ModelDeployment.class)
                .inNamespace("remove")
                .withName("gone")
                .delete();

        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(fetch("remove", "gone")).isNull();
            assertThat(podNames("remove", "gone")).isEmpty();
            assertThat(client.services().inNamespace("remove").list().getItems())
                    .isEmpty();
        });
    }

    @Test
    void drainWindowIsInStatusAndATooShortGraceIsWarnedOnce() {
        client.resource(deployment("pd", "SGLang")
                        .scaling("decode")
                        .namespace("window")
                        .role(role("decode").kind("Decode"))
                        .role(role("prefill").kind("Prefill").grace(45))
                        .build())
                .create();

        await().atMost(PATIENCE).untilAsserted(() -> {
            ModelDeployment md = fetch("window", "pd");
            assertThat(md.getStatus()).isNotNull();
            assertThat(md.getStatus().roles())
                    .extracting(r -> r.drain().graceSeconds() + "/" + r.drain().lastReadStartsBy() + "/"
                            + r.drain().sigtermBy())
                    .containsExactly("30/25/27", "45/40/42");
            assertThat(events("window", "pd", "GraceTooShortForSplitRole"))
                    .singleElement()
                    .satisfies(e -> assertThat(e.getMessage())
                            .startsWith("role decode: an SGLang Decode engine needs about 20 s"));
        });
    }
}
