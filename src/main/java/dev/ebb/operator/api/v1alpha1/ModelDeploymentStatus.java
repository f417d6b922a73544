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

        @JsonPropertyDescription(
                "What the retirements under way are doing, for the printer column: one state, or counts of each.")
        String retirementsSummary,

        List<RetirementStatus> retirements,
        List<AbortedRetirement> abortedRetirements,
        List<Condition> conditions,

        @JsonPropertyDescription(
                "What the scale subresource reads: the scaled role's current replicas and its serving leaders' selector.")
        ScalingStatus scaling,

        @JsonPropertyDescription(
                "The value of the annotation serving.ebb.dev/refresh-hooks whose replacements are under way:"
                        + " replicas that carry an older drain hook or default engine image are replaced one at a time.")
        String hooksRefreshing,

        @JsonPropertyDescription(
                "The last value of the annotation serving.ebb.dev/refresh-hooks the operator carried out in"
                        + " full; setting the annotation to another value starts a new refresh.")
        String hooksRefreshedFor) {

    /** A status without the scale subresource's part, which only a resolved deployment can tell, nor a refresh's. */
    public ModelDeploymentStatus(
            Long observedGeneration,
            String phase,
            String rolesSummary,
            List<RoleStatus> roles,
            RouterStatus router,
            String retirementsSummary,
            List<RetirementStatus> retirements,
            List<AbortedRetirement> abortedRetirements,
            List<Condition> conditions) {
        this(
                observedGeneration,
                phase,
                rolesSummary,
                roles,
                router,
                retirementsSummary,
                retirements,
                abortedRetirements,
                conditions,
                null,
                null,
                null);
    }

    /** The same status with where the user's refresh stands. */
    public ModelDeploymentStatus withHooksRefresh(String refreshing, String refreshedFor) {
        return new ModelDeploymentStatus(
                observedGeneration,
                phase,
                rolesSummary,
                roles,
                router,
                retirementsSummary,
                retirements,
                abortedRetirements,
                conditions,
                scaling,
                refreshing,
                refreshedFor);
    }
}
