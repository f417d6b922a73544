package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.FieldError;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.List;
import java.util.Map;

/**
 * How one router's release runs: the containers of its Pod, the files it reads, the ports its Service exposes and the
 * rights its account needs. Each kind keeps its own facts, each cited where it was read. Pure.
 */
public sealed interface RouterLayout permits LlmDRouterLayout, VllmRouterLayout, SglangGatewayLayout {
    /** Where the router's files are mounted, from the ConfigMap named after the router. */
    String CONFIG_DIR = "/etc/ebb-router";

    static RouterLayout of(RouterKind kind) {
        return switch (kind) {
            case LLM_D_ROUTER -> new LlmDRouterLayout();
            case VLLM_ROUTER -> new VllmRouterLayout();
            case SGLANG_GATEWAY -> new SglangGatewayLayout();
        };
    }

    /** Why the deployment's router, if it has one, could not serve it; see {@link #unservable}. */
    static List<FieldError> unservableBy(DesiredDeployment deployment) {
        return deployment
                .router()
                .map(router -> of(router.kind()).unservable(deployment))
                .orElse(List.of());
    }

    /** The containers of each router Pod. */
    List<Container> containers(DesiredDeployment deployment, DesiredRouter router);

    /** The files the router reads, by name, mounted under {@link #CONFIG_DIR}; empty when it reads none. */
    Map<String, String> files(DesiredDeployment deployment);

    /** What the router's Service exposes; the first is where clients send their requests. */
    List<ServicePort> servicePorts();

    /** The port clients send their requests to, on the router's Service. */
    default int clientPort() {
        return servicePorts().get(0).getPort();
    }

    /** The Pod's security context: the user the image runs as, given by number so that runAsNonRoot can be checked. */
    PodSecurityContext podSecurity();

    /** What the router's account may do in the deployment's namespace. */
    List<PolicyRule> rules();

    /**
     * Why this router's release could not serve the deployment as resolved, each naming the field to change; empty when
     * it can. Admission refuses such a spec rather than render a router that cannot start or reach its roles.
     */
    default List<FieldError> unservable(DesiredDeployment deployment) {
        return List.of();
    }

    /** Labels this router reads on each member Pod, beyond the ones every router selects on. */
    default Map<String, String> memberLabels(MemberSlot slot) {
        return Map.of();
    }

    /** Volumes of each router Pod beyond the one holding its {@link #files}: scratch space for a router that writes. */
    default List<Volume> volumes() {
        return List.of();
    }

    /** Annotations this router reads on each member Pod. */
    default Map<String, String> memberAnnotations(MemberSlot slot) {
        return Map.of();
    }
}
