package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.drain.RouterDrain;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a router needs to run in front of a deployment: its account and the rights its layout names, its files, its
 * Deployment and its Service. Each router discovers Pods itself and is told to pick only the serving leaders of this
 * deployment, so a withdrawn replica leaves its selection. What differs between routers lives in their
 * {@link RouterLayout}. Pure.
 */
public final class RouterRenderer {
    /** Marks the router's objects apart from the roles' on the labels they share. */
    public static final String COMPONENT = "serving.ebb.dev/component";

    public static final String COMPONENT_ROUTER = "router";

    private RouterRenderer() {}

    /**
     * Every object of the router, in the order they should be written, the Deployment last: a pass whose write of another
     * object is refused (a PodDisruptionBudget's or a Service's version moved on meanwhile) then leaves the Deployment on
     * its older rendering, so the pass that finally writes it is the one that has written all the rest, and tells the
     * change. Empty when the deployment has no router.
     */
    public static List<HasMetadata> render(DesiredDeployment deployment) {
        if (deployment.router().isEmpty()) {
            return List.of();
        }
        DesiredRouter router = deployment.router().get();
        RouterLayout layout = RouterLayout.of(router.kind());
        List<HasMetadata> objects = new ArrayList<>();
        objects.add(new ServiceAccountBuilder().withMetadata(meta(deployment)).build());
        objects.add(new RoleBuilder()
                .withMetadata(meta(deployment))
                .withRules(layout.rules())
                .build());
        objects.add(binding(deployment));
        Map<String, String> files = layout.files(deployment);
        if (!files.isEmpty()) {
            objects.add(new ConfigMapBuilder()
                    .withMetadata(meta(deployment))
                    .withData(new TreeMap<>(files))
                    .build());
        }
        objects.add(disruptionBudget(deployment, router));
        objects.add(new ServiceBuilder()
                .withMetadata(meta(deployment))
                .withNewSpec()
                .withType("ClusterIP")
                .withSelector(ownLabels(deployment))
                .withPorts(layout.servicePorts())
                .endSpec()
                .build());
        objects.add(deploymentOf(deployment, router, layout, !files.isEmpty()));
        return List.copyOf(objects);
    }

    /** The labels a Pod must carry for the router to send it work: this deployment's serving leaders. */
    public static Map<String, String> selects(DesiredDeployment deployment) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(Labels.DEPLOYMENT, deployment.owner().name());
        labels.put(Labels.SERVING, Labels.SERVING_YES);
        labels.put(Labels.MEMBER_INDEX, Labels.LEADER_INDEX);
        return labels;
    }

    /** Where clients inside the cluster send their requests: the router Service, on the port its layout serves them. */
    public static String clientAddress(DesiredDeployment deployment) {
        RouterLayout layout = RouterLayout.of(deployment.router().orElseThrow().kind());
        return "http://" + Names.router(deployment.owner().name()) + "."
                + deployment.owner().namespace() + ".svc:" + layout.clientPort();
    }

    private static ObjectMeta meta(DesiredDeployment deployment) {
        return new ObjectMetaBuilder()
                .withName(Names.router(deployment.owner().name()))
                .withNamespace(deployment.owner().namespace())
                .withLabels(ownLabels(deployment))
                .withOwnerReferences(PodRenderer.ownerReference(deployment.owner()))
                .build();
    }

    private static Map<String, String> ownLabels(DesiredDeployment deployment) {
        return labels(deployment.owner().name());
    }

    /** The labels on every object of a deployment's router: its Deployment and its Service find its Pods by them. */
    public static Map<String, String> labels(String deployment) {
        return Map.of(Labels.DEPLOYMENT, deployment, COMPONENT, COMPONENT_ROUTER);
    }

    private static RoleBinding binding(DesiredDeployment deployment) {
        String name = Names.router(deployment.owner().name());
        return new RoleBindingBuilder()
                .withMetadata(meta(deployment))
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("Role")
                .withName(name)
                .endRoleRef()
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(name)
                .withNamespace(deployment.owner().namespace())
                .endSubject()
                .build();
    }

    private static List<Volume> volumes(DesiredDeployment deployment, RouterLayout layout, boolean hasFiles) {
        List<Volume> volumes = new ArrayList<>();
        if (hasFiles) {
            volumes.add(new VolumeBuilder()
                    .withName("config")
                    .withNewConfigMap()
                    .withName(Names.router(deployment.owner().name()))
                    .endConfigMap()
                    .build());
        }
        volumes.addAll(layout.volumes());
        return List.copyOf(volumes);
    }

    /**
     * Evictions (a node drain, the cluster autoscaler) take router Pods one at a time while others serve, and never the
     * only one: a deployment with one router Pod keeps it until the router is rolled, which surges a replacement first.
     * A Pod that is not ready serves nothing, so it never holds a drain up (policy/v1 unhealthyPodEvictionPolicy).
     */
    private static PodDisruptionBudget disruptionBudget(DesiredDeployment deployment, DesiredRouter router) {
        IntOrString one = new IntOrString(1);
        return new PodDisruptionBudgetBuilder()
                .withMetadata(meta(deployment))
                .withNewSpec()
                .withNewSelector()
                .withMatchLabels(ownLabels(deployment))
                .endSelector()
                .withMinAvailable(router.replicas() > 1 ? null : one)
                .withMaxUnavailable(router.replicas() > 1 ? one : null)
                .withUnhealthyPodEvictionPolicy("AlwaysAllow")
                .endSpec()
                .build();
    }

    private static Deployment deploymentOf(
            DesiredDeployment deployment, DesiredRouter router, RouterLayout layout, boolean hasFiles) {
        Map<String, String> podLabels = ownLabels(deployment);
        return new DeploymentBuilder()
                .withMetadata(meta(deployment))
                .withNewSpec()
                .withReplicas(router.replicas())
                .withNewSelector()
                .withMatchLabels(podLabels)
                .endSelector()
                // a new router Pod is ready before an old one leaves, so a rollout never serves with fewer
                .withNewStrategy()
                .withType("RollingUpdate")
                .withNewRollingUpdate()
                .withMaxUnavailable(new IntOrString(0))
                .withMaxSurge(new IntOrString(1))
                .endRollingUpdate()
                .endStrategy()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(podLabels)
                .endMetadata()
                .withNewSpec()
                .withServiceAccountName(Names.router(deployment.owner().name()))
                .withTerminationGracePeriodSeconds(
                        (long) RouterDrain.of(deployment).grace())
                .withContainers(layout.containers(deployment, router))
                .withVolumes(volumes(deployment, layout, hasFiles))
                .withSecurityContext(layout.podSecurity())
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }
}
