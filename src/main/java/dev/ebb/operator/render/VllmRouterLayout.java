package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** vLLM's production-stack router. */
final class VllmRouterLayout implements RouterLayout {
    @Override
    public List<Container> containers(DesiredDeployment deployment, DesiredRouter router) {
        List<String> args = new ArrayList<>(args(deployment));
        args.addAll(router.extraArgs());
        int port = RouterAdmin.of(RouterKind.VLLM_ROUTER).port();
        return List.of(new ContainerBuilder()
                .withName("router")
                .withImage(router.images().router())
                .withArgs(args)
                .withPorts(RouterParts.containerPorts(servicePorts()))
                .withSecurityContext(RouterParts.locked())
                // /health answers 503 while its discovery or stats threads are down
                .withReadinessProbe(new ProbeBuilder().withNewHttpGet().withPath("/health").withPort(new IntOrString(port)).endHttpGet().build())
                .build());
    }

    /** production-stack src/vllm_router/parsers/parser.py: Kubernetes discovery by Pod IP and label selector. */
    static List<String> args(DesiredDeployment deployment) {
        String selector = RouterRenderer.selects(deployment).entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
        return List.of("--host", "0.0.0.0", "--port", Integer.toString(RouterAdmin.of(RouterKind.VLLM_ROUTER).port()),
                "--service-discovery", "k8s", "--k8s-service-discovery-type", "pod-ip", "--k8s-namespace", deployment.owner().namespace(),
                "--k8s-label-selector", selector, "--k8s-port", Integer.toString(deployment.roles().get(0).port()),
                "--routing-logic", "roundrobin");
    }

    @Override
    public Map<String, String> files(DesiredDeployment deployment) {
        return Map.of();
    }

    @Override
    public List<ServicePort> servicePorts() {
        return List.of(RouterParts.servicePort("http", RouterAdmin.of(RouterKind.VLLM_ROUTER).port()));
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
