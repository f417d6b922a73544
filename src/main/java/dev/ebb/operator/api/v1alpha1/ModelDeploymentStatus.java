package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

public record ModelDeploymentStatus(
        Long observedGeneration,
        String phase,
        String rolesSummary,
        List<RoleStatus> roles,
        RouterStatus router,
        @JsonPropertyDescription("What the retirements under way are doing, for the printer column: one state, or counts of each.")
        String retirementsSummary,
        List<RetirementStatus> retirements,
        List<AbortedRetirement> abortedRetirements,
        List<Condition> conditions) {
}
