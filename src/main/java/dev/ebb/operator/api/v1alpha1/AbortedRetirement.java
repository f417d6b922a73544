package dev.ebb.operator.api.v1alpha1;

/**
 * A replica whose last retirement aborted and which is still to leave: it stays, serving, until the retirement is
 * retried. Times are RFC 3339. {@code retryAt} is absent for a refusal, which only the retry annotation retries;
 * {@code retryToken} is the value of that annotation the aborted operation answered, so the same value never retries
 * it again.
 */
public record AbortedRetirement(
        String roleName,
        Integer replicaOrdinal,
        String reason,
        String message,
        String abortedAt,
        String retryAt,
        String retryToken) {
}
