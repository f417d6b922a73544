package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Platform;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Decode replicas under llm-d's router ("direct decoders") get llm-d's routing proxy in front of the engine: the
 * proxy takes the role's port and sends prefill work on before decoding; the engine moves to a port of its own, which
 * the scrape annotations, the drain hook and member reads keep naming.
 */
public final class RoutingProxy {
    public static final String CONTAINER = "routing-proxy";
    /** The proxy's container port, the one the role's Service targets on its Pods. */
    public static final String PORT_NAME = "proxy";
    /** Where the engine listens behind the proxy (the fact and its source: {@link ModelDeploymentSpec#ROUTING_PROXY_ENGINE_PORT}). */
    public static final int ENGINE_PORT = ModelDeploymentSpec.ROUTING_PROXY_ENGINE_PORT;
    /** The user the proxy's image runs as. */
    private static final long NONROOT_USER = 65532L;

    private RoutingProxy() {}

    public static boolean fronts(MemberSlot slot) {
        return fronts(slot.deployment(), slot.role());
    }

    public static boolean fronts(DesiredDeployment deployment, DesiredRole role) {
        return !role.takeOver()
                && role.kind() == RoleKind.Decode
                && deployment
                        .router()
                        .filter(r -> r.kind() == RouterKind.LLM_D_ROUTER)
                        .isPresent();
    }

    /** Whether any role's Pods carry the proxy, whose form (native sidecar or not) depends on the cluster's version. */
    public static boolean frontsAnyRole(DesiredDeployment deployment) {
        return deployment.roles().stream().anyMatch(role -> fronts(deployment, role));
    }

    /** The Pod's proxy container, wherever it was rendered: among the init containers (native sidecar) or the main ones. */
    public static Optional<Container> in(Pod pod) {
        return Stream.concat(
                        Objects.requireNonNullElse(pod.getSpec().getInitContainers(), List.<Container>of()).stream(),
                        Objects.requireNonNullElse(pod.getSpec().getContainers(), List.<Container>of()).stream())
                .filter(c -> CONTAINER.equals(c.getName()))
                .findFirst();
    }

    /** The port the engine itself listens on. */
    public static int enginePort(MemberSlot slot) {
        return fronts(slot) ? ENGINE_PORT : slot.role().port();
    }

    /**
     * The proxy's flags as llm-d's pd-sidecar reads them at v0.10.0 (pkg/sidecar/proxy/options.go, parsed by
     * cmd/pd-sidecar/main.go): --port, where it listens; --model-server-port, the engine behind it (--vllm-port is its
     * deprecated alias, and --connector is no flag of this release); --kv-connector, "nixlv2"
     * or "sglang" (pkg/sidecar/constants/constants.go); --secure-proxy=false, since it defaults to true and would then
     * serve a self-signed TLS certificate to the router's Envoy, which connects in plaintext. As a native sidecar it
     * starts before the engine and stops after it, so it outlives the drain.
     */
    static Container container(MemberSlot slot, Platform platform) {
        String connector = slot.deployment().engine() == Engine.SGLANG ? "sglang" : "nixlv2";
        ContainerBuilder proxy = new ContainerBuilder()
                .withName(CONTAINER)
                .withImage(slot.deployment().router().orElseThrow().images().routingProxy())
                // the image's ENTRYPOINT is /app/pd-sidecar (Dockerfile.sidecar at v0.10.0): flags only
                .withArgs(List.of(
                        "--port=" + slot.role().port(),
                        "--model-server-port=" + ENGINE_PORT,
                        "--kv-connector=" + connector,
                        "--secure-proxy=false"))
                .addNewPort()
                .withName(PORT_NAME)
                .withContainerPort(slot.role().port())
                .withProtocol("TCP")
                .endPort()
                // Dockerfile.sidecar at v0.10.0 runs it as USER 65532:65532; named, the kubelet can check runAsNonRoot
                .withNewSecurityContext()
                .withRunAsNonRoot(true)
                .withRunAsUser(NONROOT_USER)
                .withRunAsGroup(NONROOT_USER)
                .withAllowPrivilegeEscalation(false)
                .withReadOnlyRootFilesystem(true)
                .withNewCapabilities()
                .withDrop("ALL")
                .endCapabilities()
                .endSecurityContext();
        if (platform.nativeSidecars()) {
            proxy.withRestartPolicy("Always");
        }
        return proxy.build();
    }
}
