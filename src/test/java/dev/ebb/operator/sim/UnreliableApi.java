package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * How an API server under load or in a rolling restart treats one caller (told apart by its User-Agent, so the test
 * world's own kubelet and clients are spared): a share of its writes refused, every answer up to a delay late. Seeded,
 * so a run can be replayed. The statuses are worded as k8s.io/apimachinery pkg/api/errors/errors.go (v0.33.1) words them:
 * NewInternalError, NewTooManyRequests and NewConflict, the last for an update (PUT) only, as an API server answers
 * a write from a stale read.
 */
public final class UnreliableApi {
    private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH", "DELETE");
    private final String userAgent;
    private final double failedWriteShare;
    private final Duration slowest;
    private final Random random;

    /**
     * @param userAgent the caller's User-Agent header, exactly
     * @param failedWriteShare the share of its writes refused, 0 to 1
     * @param slowest the most an answer to it is delayed (uniformly from zero)
     */
    public UnreliableApi(String userAgent, double failedWriteShare, Duration slowest, long seed) {
        if (failedWriteShare < 0 || failedWriteShare > 1) {
            throw new IllegalArgumentException("failedWriteShare must be within 0..1: " + failedWriteShare);
        }
        this.userAgent = userAgent;
        this.failedWriteShare = failedWriteShare;
        this.slowest = slowest;
        this.random = new Random(seed);
    }

    boolean concerns(RecordedRequest request) {
        return userAgent.equals(request.getHeader("User-Agent"));
    }

    synchronized Duration delay() {
        return slowest.isZero() ? Duration.ZERO : Duration.ofMillis(random.nextLong(slowest.toMillis() + 1));
    }

    /** The refusal this request gets, if it is one of the writes that fail. */
    synchronized Optional<Status> refusal(RecordedRequest request) {
        String method = request.getMethod();
        if (!WRITES.contains(method) || random.nextDouble() >= failedWriteShare) {
            return Optional.empty();
        }
        // a patch names no resourceVersion, and the API server retries its own conflicts on one
        // (k8s.io/apiserver pkg/endpoints/handlers/patch.go, maxRetryWhenPatchConflicts; not read at a release tag)
        boolean update = "PUT".equals(method);
        return Optional.of(
                switch (random.nextInt(update ? 3 : 2)) {
                    case 0 ->
                        new StatusBuilder()
                                .withStatus("Failure")
                                .withReason("InternalError")
                                .withCode(500)
                                .withMessage("Internal error occurred: etcdserver: request timed out")
                                .build();
                    case 1 ->
                        new StatusBuilder()
                                .withStatus("Failure")
                                .withReason("TooManyRequests")
                                .withCode(429)
                                .withMessage(
                                        "the server has received too many requests and has asked us to try again later")
                                .build();
                    default ->
                        new StatusBuilder()
                                .withStatus("Failure")
                                .withReason("Conflict")
                                .withCode(409)
                                .withMessage(
                                        "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again")
                                .build();
                });
    }
}
