package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** llm-d's endpoint picker. */
final class LlmDRouterLayout implements RouterLayout {
    static final String CONFIG_FILE = "epp-config.yaml";

    /** Score endpoints by their queue and pick the best, after the picker's documented default profile. */
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

    @Override
    public List<Container> containers(DesiredDeployment deployment, DesiredRouter router) {
        List<String> args = new ArrayList<>(args(deployment));
        args.addAll(router.extraArgs());
        return List.of(new ContainerBuilder()
                .withName("router")
                .withImage(router.images().router())
                .withArgs(args)
                .withPorts(RouterParts.containerPorts(servicePorts()))
                .withSecurityContext(RouterParts.locked())
                // its gRPC health service, on its own port, as the picker's chart probes it
                .withReadinessProbe(new ProbeBuilder().withNewGrpc().withPort(9003).withService("inference-extension").endGrpc().build())
                .addNewVolumeMount().withName("config").withMountPath(CONFIG_DIR).withReadOnly(true).endVolumeMount()
                .build());
    }

    /**
     * llm-d-router pkg/epp/server/options.go: standalone discovery by --endpoint-selector and --endpoint-target-ports,
     * no InferencePool needed; metrics without a token so the operator can read the per-endpoint counts.
     */
    static List<String> args(DesiredDeployment deployment) {
        String selector = RouterRenderer.selects(deployment).entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
        return List.of("--endpoint-selector=" + selector, "--endpoint-target-ports=" + deployment.roles().get(0).port(),
                "--config-file=" + CONFIG_DIR + "/" + CONFIG_FILE, "--grpc-port=9002", "--grpc-health-port=9003",
                "--metrics-port=" + RouterAdmin.of(RouterKind.LLM_D_ROUTER).port(), "--metrics-endpoint-auth=false");
    }

    @Override
    public Map<String, String> files(DesiredDeployment deployment) {
        return Map.of(CONFIG_FILE, EPP_CONFIG);
    }

    @Override
    public List<ServicePort> servicePorts() {
        return List.of(RouterParts.servicePort("grpc", 9002), RouterParts.servicePort("metrics", RouterAdmin.of(RouterKind.LLM_D_ROUTER).port()));
    }

    @Override
    public PodSecurityContext podSecurity() {
        return new PodSecurityContextBuilder().withRunAsNonRoot(true).build();
    }

    @Override
    public List<PolicyRule> rules() {
        return List.of(RouterParts.podReader());
    }
}
