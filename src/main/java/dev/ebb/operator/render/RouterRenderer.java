package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What a router needs to run in front of a deployment: its account and the right to watch the deployment's Pods,
 * its configuration, its Deployment and its Service. Each router discovers Pods itself and is told to pick only
 * the serving leaders of this deployment, so a withdrawn replica leaves its selection. Pure.
 */
public final class RouterRenderer {
    /** Marks the router's objects apart from the roles' on the labels they share. */
    public static final String COMPONENT = "serving.ebb.dev/component";
    public static final String COMPONENT_ROUTER = "router";
    static final String CONFIG_FILE = "epp-config.yaml";
    static final String CONFIG_DIR = "/etc/ebb-router";

    /**
     * A minimal picker configuration: score endpoints by their queue and pick the best. The plugin names follow
     * the endpoint picker's documented default profile.
     */
    static final String EPP_CONFIG = """
            apiVersion: inference.networking.x-k8s.io/v1alpha1
            kind: EndpointPickerConfig
            plugins:
            - type: queue-scorer
            - type: max-score-picker
            schedulingProfiles:
            - name: default
              plugins:
              - pluginRef: queue-scorer
              - pluginRef: max-score-picker
            """;

    private RouterRenderer() {
    }

    /** Every object of the router, in the order they should be created. Empty when the deployment has no router. */
    public static List<HasMetadata> render(DesiredDeployment deployment) {
        if (deployment.router().isEmpty()) {
            return List.of();
        }
        DesiredRouter router = deployment.router().get();
        List<HasMetadata> objects = new ArrayList<>();
        objects.add(new ServiceAccountBuilder().withMetadata(meta(deployment)).build());
        objects.add(podReader(deployment));
        objects.add(binding(deployment));
        if (router.kind() == RouterKind.LLM_D_ROUTER) {
            objects.add(new ConfigMapBuilder().withMetadata(meta(deployment)).addToData(CONFIG_FILE, EPP_CONFIG).build());
        }
        objects.add(deploymentOf(deployment, router));
        objects.add(service(deployment, router));
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

    /** Pod discovery, read-only and only in the deployment's namespace. */
    private static Role podReader(DesiredDeployment deployment) {
        return new RoleBuilder().withMetadata(meta(deployment))
                .withRules(new PolicyRuleBuilder().withApiGroups("").withResources("pods").withVerbs("get", "list", "watch").build())
                .build();
    }

    private static RoleBinding binding(DesiredDeployment deployment) {
        String name = Names.router(deployment.owner().name());
        return new RoleBindingBuilder().withMetadata(meta(deployment))
                .withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("Role").withName(name).endRoleRef()
                .addNewSubject().withKind("ServiceAccount").withName(name).withNamespace(deployment.owner().namespace()).endSubject()
                .build();
    }

    private static Deployment deploymentOf(DesiredDeployment deployment, DesiredRouter router) {
        Map<String, String> podLabels = ownLabels(deployment);
        return new DeploymentBuilder().withMetadata(meta(deployment))
                .withNewSpec()
                    .withReplicas(router.replicas())
                    .withNewSelector().withMatchLabels(podLabels).endSelector()
                    .withNewTemplate()
                        .withNewMetadata().withLabels(podLabels).endMetadata()
                        .withNewSpec()
                            .withServiceAccountName(Names.router(deployment.owner().name()))
                            .withContainers(container(deployment, router))
                            .withVolumes(router.kind() == RouterKind.LLM_D_ROUTER
                                    ? List.of(new VolumeBuilder().withName("config")
                                            .withNewConfigMap().withName(Names.router(deployment.owner().name())).endConfigMap().build())
                                    : List.of())
                            .withNewSecurityContext().withRunAsNonRoot(true).endSecurityContext()
                        .endSpec()
                    .endTemplate()
                .endSpec()
                .build();
    }

    private static Container container(DesiredDeployment deployment, DesiredRouter router) {
        List<String> args = new ArrayList<>(args(deployment, router.kind()));
        args.addAll(router.extraArgs());
        ContainerBuilder container = new ContainerBuilder()
                .withName("router")
                .withImage(router.image())
                .withArgs(args)
                .withPorts(ports(router.kind()))
                .withNewSecurityContext().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                    .withNewCapabilities().withDrop("ALL").endCapabilities().endSecurityContext();
        return switch (router.kind()) {
            // its gRPC health service, on its own port, as the picker's chart probes it
            case LLM_D_ROUTER -> container
                    .withReadinessProbe(new ProbeBuilder().withNewGrpc().withPort(9003).withService("inference-extension").endGrpc().build())
                    .addNewVolumeMount().withName("config").withMountPath(CONFIG_DIR).withReadOnly(true).endVolumeMount()
                    .build();
            // /health answers 503 while its discovery or stats threads are down
            case VLLM_ROUTER -> container
                    .withReadinessProbe(new ProbeBuilder().withNewHttpGet().withPath("/health").withPort(new IntOrString(8001)).endHttpGet().build())
                    .build();
            case SGLANG_GATEWAY -> container
                    .withCommand("sglang-router")
                    .withReadinessProbe(new ProbeBuilder().withNewHttpGet().withPath("/health").withPort(new IntOrString(30000)).endHttpGet().build())
                    .build();
        };
    }

    /** The router's own flags; each block names where they are documented. */
    static List<String> args(DesiredDeployment deployment, RouterKind kind) {
        String port = Integer.toString(deployment.roles().get(0).port());
        String namespace = deployment.owner().namespace();
        Map<String, String> selects = selects(deployment);
        String selector = selects.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
        return switch (kind) {
            // llm-d-router pkg/epp/server/options.go: standalone discovery by --endpoint-selector and
            // --endpoint-target-ports, no InferencePool needed; metrics without a token so the operator can read
            // the per-endpoint counts from inside the cluster
            case LLM_D_ROUTER -> List.of("--endpoint-selector=" + selector, "--endpoint-target-ports=" + port,
                    "--config-file=" + CONFIG_DIR + "/" + CONFIG_FILE, "--grpc-port=9002", "--grpc-health-port=9003",
                    "--metrics-port=" + RouterAdmin.of(kind).port(), "--metrics-endpoint-auth=false");
            // production-stack src/vllm_router/parsers/parser.py: Kubernetes discovery by Pod IP and label selector
            case VLLM_ROUTER -> List.of("--host", "0.0.0.0", "--port", Integer.toString(RouterAdmin.of(kind).port()),
                    "--service-discovery", "k8s", "--k8s-service-discovery-type", "pod-ip", "--k8s-namespace", namespace,
                    "--k8s-label-selector", selector, "--k8s-port", port, "--routing-logic", "roundrobin");
            // sgl-model-gateway src/main.rs: --service-discovery is a switch, --selector takes k=v pairs, the port
            // defaults to 80 and the namespace to all of them, so both are set
            case SGLANG_GATEWAY -> {
                List<String> gateway = new ArrayList<>(List.of("--host", "0.0.0.0", "--port", Integer.toString(RouterAdmin.of(kind).port()),
                        "--service-discovery", "--selector"));
                selects.forEach((key, value) -> gateway.add(key + "=" + value));
                gateway.addAll(List.of("--service-discovery-port", port, "--service-discovery-namespace", namespace,
                        "--prometheus-port", "29000", "--policy", "cache_aware"));
                yield List.copyOf(gateway);
            }
        };
    }

    private static List<ContainerPort> ports(RouterKind kind) {
        return servicePorts(kind).stream()
                .map(p -> new ContainerPortBuilder().withName(p.getName()).withContainerPort(p.getPort()).withProtocol("TCP").build())
                .toList();
    }

    private static List<ServicePort> servicePorts(RouterKind kind) {
        return switch (kind) {
            case LLM_D_ROUTER -> List.of(port("grpc", 9002), port("metrics", RouterAdmin.of(kind).port()));
            case VLLM_ROUTER -> List.of(port("http", RouterAdmin.of(kind).port()));
            case SGLANG_GATEWAY -> List.of(port("http", RouterAdmin.of(kind).port()), port("metrics", 29000));
        };
    }

    private static ServicePort port(String name, int number) {
        return new ServicePortBuilder().withName(name).withPort(number).withTargetPort(new IntOrString(number)).withProtocol("TCP").build();
    }

    private static Service service(DesiredDeployment deployment, DesiredRouter router) {
        return new ServiceBuilder().withMetadata(meta(deployment))
                .withNewSpec().withType("ClusterIP").withSelector(ownLabels(deployment)).withPorts(servicePorts(router.kind())).endSpec()
                .build();
    }
}
