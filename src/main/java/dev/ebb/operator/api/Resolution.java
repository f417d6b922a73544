package dev.ebb.operator.api;

import java.util.List;
import java.util.stream.Collectors;

/** The outcome of checking a ModelDeployment: either everything to render, or every field that is wrong. */
public sealed interface Resolution {
    record Accepted(DesiredDeployment deployment) implements Resolution {}

    record Rejected(List<FieldError> errors) implements Resolution {
        public String summary() {
            return errors.stream().map(FieldError::toString).collect(Collectors.joining("; "));
        }
    }
}
