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

/** SGLang's model gateway. */
final class SglangGatewayLayout implements RouterLayout {
    @Override
    public List<Container> containers(DesiredDeployment deployment, DesiredRouter router) {
        List<String> args = new ArrayList<>(args(deployment));
        args.addAll(router.extraArgs());
        int port = RouterAdmin.of(RouterKind.SGLANG_GATEWAY).port();
        return List.of(new ContainerBuilder()
                .withName("router")
                .withImage(router.images().router())
                .withCommand("sglang-router")
                .withArgs(args)
                .withPorts(RouterParts.containerPorts(servicePorts()))
                .withSecurityContext(RouterParts.locked())
                .withReadinessProbe(new ProbeBuilder().withNewHttpGet().withPath("/health").withPort(new IntOrString(port)).endHttpGet().build())
                .build());
    }

    /**
     * sgl-model-gateway src/main.rs: --service-discovery is a switch, --selector takes k=v pairs, the port defaults to
     * 80 and the namespace to all of them, so both are set.
     */
    static List<String> args(DesiredDeployment deployment) {
        List<String> gateway = new ArrayList<>(List.of("--host", "0.0.0.0", "--port", Integer.toString(RouterAdmin.of(RouterKind.SGLANG_GATEWAY).port()),
                "--service-discovery", "--selector"));
        RouterRenderer.selects(deployment).forEach((key, value) -> gateway.add(key + "=" + value));
        gateway.addAll(List.of("--service-discovery-port", Integer.toString(deployment.roles().get(0).port()),
                "--service-discovery-namespace", deployment.owner().namespace(), "--prometheus-port", "29000", "--policy", "cache_aware"));
        return List.copyOf(gateway);
    }

    @Override
    public Map<String, String> files(DesiredDeployment deployment) {
        return Map.of();
    }

    @Override
    public List<ServicePort> servicePorts() {
        return List.of(RouterParts.servicePort("http", RouterAdmin.of(RouterKind.SGLANG_GATEWAY).port()), RouterParts.servicePort("metrics", 29000));
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
