package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.NodeMaintenance;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import java.util.Map;

/**
 * Each role's PodDisruptionBudget: what an eviction (a node drain, a cluster upgrade, an autoscaler taking a node away)
 * may take from it. The operator's own deletes are not evictions, so the budget never holds up a retirement. Pure.
 *
 * <p>The budget is always an integer {@code minAvailable}. The disruption controller then counts the Pods its selector
 * matches; with {@code maxUnavailable} or a percentage it would ask the Pods' controller for its scale, and a
 * ModelDeployment's scale is one role's replicas, not this role's Pods (getExpectedPodCount in
 * pkg/controller/disruption/disruption.go, Kubernetes v1.37.2).
 */
public final class DisruptionBudgets {
    /** policy/v1: an unready Pod may be evicted only while the budget is met, which for Protocol is never. */
    static final String IF_HEALTHY = "IfHealthyBudget";
    /** policy/v1: an unready Pod may always be evicted. */
    static final String ALWAYS = "AlwaysAllow";

    private DisruptionBudgets() {}

    /**
     * @param rolePods how many of the role's Pods exist now, leaving ones included
     */
    public static PodDisruptionBudget of(DesiredDeployment deployment, DesiredRole role, int rolePods) {
        String owner = deployment.owner().name();
        Map<String, String> roleLabels = Map.of(Labels.DEPLOYMENT, owner, Labels.ROLE, role.name());
        boolean protocol = role.nodeMaintenance() == NodeMaintenance.Protocol;
        // Protocol: every Pod of the role, a withdrawn one still finishing its streams included, and none may be
        // evicted. Evict: the serving Pods, of which an eviction may take maxUnavailable. One evicted member ends its
        // whole replica, so that many Pods, whatever the replica's size: counted in replicas, two members of two
        // replicas could go at once.
        Map<String, String> selected = protocol
                ? roleLabels
                : Map.of(Labels.DEPLOYMENT, owner, Labels.ROLE, role.name(), Labels.SERVING, Labels.SERVING_YES);
        int minAvailable = protocol
                ? Math.max(rolePods, (role.replicas() + role.maxSurge()) * role.size())
                : Math.max(0, role.replicas() * role.size() - role.maxUnavailable());
        return new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName(Names.roleService(owner, role.name()))
                .withNamespace(deployment.owner().namespace())
                .withLabels(roleLabels)
                .withOwnerReferences(PodRenderer.ownerReference(deployment.owner()))
                .endMetadata()
                .withNewSpec()
                .withNewSelector()
                .withMatchLabels(selected)
                .endSelector()
                .withMinAvailable(new IntOrString(minAvailable))
                .withUnhealthyPodEvictionPolicy(protocol ? IF_HEALTHY : ALWAYS)
                .endSpec()
                .build();
    }
}
