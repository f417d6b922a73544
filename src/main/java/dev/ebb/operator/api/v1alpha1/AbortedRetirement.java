package dev.ebb.operator.api.v1alpha1;

/**
 * A replica whose last retirement aborted and which is still to leave (or, for a rollout, to be replaced): it stays,
 * serving, until the retirement is retried. Times are RFC 3339. {@code retryAt} is when the cool-down retries it; it
 * is absent for a refusal, which only the retry annotation retries. A blocked replica keeps its {@code retryAt} and is
 * also retried at once when the spec changes. {@code retryToken} is the value of the retry annotation the aborted
 * operation answered, so the same value never retries it again.
 * {@code attempts} counts the aborts in a row; {@code generation} is the spec's generation at the last one.
 */
public record AbortedRetirement(
        String roleName,
        Integer replicaOrdinal,
        String cause,
        Integer attempts,
        Long generation,
        String reason,
        String message,
        String abortedAt,
        String retryAt,
        String retryToken) {}
