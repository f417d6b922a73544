package dev.ebb.operator.api.v1alpha1;

import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

public record ModelDeploymentStatus(
        Long observedGeneration,
        String phase,
        String rolesSummary,
        List<RoleStatus> roles,
        RouterStatus router,
        RetirementStatus retirement,
        List<AbortedRetirement> abortedRetirements,
        List<Condition> conditions) {
}
