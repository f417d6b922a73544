package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** How a leaving replica of the role is retired. */
public record RetirementSpec(
        @Min(RetirementSpec.MIN_DRAIN_SECONDS)
        @Max(RetirementSpec.MAX_DRAIN_SECONDS)
        @JsonPropertyDescription("How long a leaving replica may take to be proven idle once withdrawn, "
                + RetirementSpec.MIN_DRAIN_SECONDS
                + ".." + RetirementSpec.MAX_DRAIN_SECONDS + "; " + RetirementSpec.DEFAULT_DRAIN_SECONDS
                + " when unset."
                + " Raise it for roles whose generations run long (reasoning, batch).")
        Integer drainSeconds) {
    public static final int MIN_DRAIN_SECONDS = 30;
    public static final int MAX_DRAIN_SECONDS = 86400;
    public static final int DEFAULT_DRAIN_SECONDS = 240;
}
