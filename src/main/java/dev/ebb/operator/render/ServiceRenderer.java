package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.Map;

/** The Services of a role: one that clients reach, and one per multi-Pod replica for its members to meet. */
public final class ServiceRenderer {
    private ServiceRenderer() {}

    /** Fronts the leaders that still serve: withdrawal flips the serving label and the Pod leaves the Service. */
    public static Service roleService(DesiredDeployment deployment, DesiredRole role) {
        String owner = deployment.owner().name();
        return new ServiceBuilder()
                .withNewMetadata()
                .withName(Names.roleService(owner, role.name()))
                .withNamespace(deployment.owner().namespace())
                .withLabels(Map.of(Labels.DEPLOYMENT, owner, Labels.ROLE, role.name()))
                .withOwnerReferences(PodRenderer.ownerReference(deployment.owner()))
                .endMetadata()
                .withNewSpec()
                .withType("ClusterIP")
                .withSelector(Map.of(
                        Labels.DEPLOYMENT,
                        owner,
                        Labels.ROLE,
                        role.name(),
                        Labels.MEMBER_INDEX,
                        Labels.LEADER_INDEX,
                        Labels.SERVING,
                        Labels.SERVING_YES))
                .addNewPort()
                .withName("http")
                .withPort(role.port())
                .withTargetPort(new IntOrString(role.port()))
                .withProtocol("TCP")
                .endPort()
                .endSpec()
                .build();
    }

    /** Headless and publishing not-ready members, since members must find each other before any is ready. */
    public static Service replicaService(DesiredDeployment deployment, DesiredRole role, int ordinal) {
        String owner = deployment.owner().name();
        return new ServiceBuilder()
                .withNewMetadata()
                .withName(Names.replica(owner, role.name(), ordinal))
                .withNamespace(deployment.owner().namespace())
                .withLabels(Map.of(
                        Labels.DEPLOYMENT, owner, Labels.ROLE, role.name(), Labels.REPLICA, Integer.toString(ordinal)))
                .withOwnerReferences(PodRenderer.ownerReference(deployment.owner()))
                .endMetadata()
                .withNewSpec()
                .withClusterIP("None")
                // keeps a draining leader's name resolving for its followers' hooks until its Pod is gone: the
                // EndpointSlice controller keeps a terminating Pod, ready=true under this flag
                // (kubernetes/endpointslice v0.34.1, reconciler.go and utils.go podToEndpoint), and CoreDNS drops only
                // ready=false endpoints (coredns v1.12.4, plugin/kubernetes/object/endpoint.go
                // EndpointSliceToEndpoints)
                .withPublishNotReadyAddresses(true)
                .withSelector(Map.of(
                        Labels.DEPLOYMENT, owner, Labels.ROLE, role.name(), Labels.REPLICA, Integer.toString(ordinal)))
                .endSpec()
                .build();
    }
}
