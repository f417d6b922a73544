package dev.ebb.operator.api.v1alpha1;

/**
 * A replica whose last retirement aborted and which is still to leave (or, for a rollout, to be replaced): it stays,
 * serving, until the retirement is retried. Times are RFC 3339. {@code retryAt} is absent for a refusal and once the
 * replica is blocked, which only the retry annotation (or, when blocked, a spec change) retries; {@code retryToken} is
 * the value of that annotation the aborted operation answered, so the same value never retries it again.
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
