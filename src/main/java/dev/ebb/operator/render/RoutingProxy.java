package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Platform;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import java.util.List;

/**
 * Decode replicas under llm-d's router ("direct decoders") get llm-d's routing proxy in front of the engine: the
 * proxy takes the role's port and sends prefill work on before decoding; the engine moves to a port of its own, which
 * the scrape annotations, the drain hook and member reads keep naming.
 */
public final class RoutingProxy {
    public static final String CONTAINER = "routing-proxy";
    /** Where the engine listens behind the proxy, as llm-d's model-service chart places it. */
    public static final int ENGINE_PORT = 8200;

    private RoutingProxy() {
    }

    public static boolean fronts(MemberSlot slot) {
        return fronts(slot.deployment(), slot.role());
    }

    private static boolean fronts(DesiredDeployment deployment, DesiredRole role) {
        return !role.takeOver() && role.kind() == RoleKind.Decode
                && deployment.router().filter(r -> r.kind() == RouterKind.LLM_D_ROUTER).isPresent();
    }

    /** Whether any role's Pods carry the proxy, whose form (native sidecar or not) depends on the cluster's version. */
    public static boolean frontsAnyRole(DesiredDeployment deployment) {
        return deployment.roles().stream().anyMatch(role -> fronts(deployment, role));
    }

    /** The port the engine itself listens on. */
    public static int enginePort(MemberSlot slot) {
        return fronts(slot) ? ENGINE_PORT : slot.role().port();
    }

    /**
     * The proxy's flags as llm-d's pd-sidecar reads them (cmd/pd-sidecar/main.go: --port, --vllm-port,
     * --connector). As a native sidecar it starts before the engine and stops after it, so it outlives the drain.
     */
    static Container container(MemberSlot slot, Platform platform) {
        String connector = slot.deployment().engine() == Engine.SGLANG ? "sglang" : "nixlv2";
        ContainerBuilder proxy = new ContainerBuilder()
                .withName(CONTAINER)
                .withImage(slot.deployment().router().orElseThrow().images().routingProxy())
                .withArgs(List.of("--port=" + slot.role().port(), "--vllm-port=" + ENGINE_PORT, "--connector=" + connector))
                .addNewPort().withName("proxy").withContainerPort(slot.role().port()).withProtocol("TCP").endPort()
                .withNewSecurityContext().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                    .withNewCapabilities().withDrop("ALL").endCapabilities().endSecurityContext();
        if (platform.nativeSidecars()) {
            proxy.withRestartPolicy("Always");
        }
        return proxy.build();
    }
}
