package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import java.util.Objects;
import java.util.Optional;

/**
 * Where the user's {@code serving.ebb.dev/refresh-hooks} token stands. A value the operator has not carried out in full
 * yet asks for every replica behind the operator (an older drain hook or default image) to be replaced; the refresh is
 * done once no Pod is behind and every role has its replicas Ready again, and the value is then kept in status so that
 * it asks for nothing more. Pure.
 */
final class HooksRefresh {
    private HooksRefresh() {}

    /** Whether the token asks for replicas to be replaced now. */
    static boolean requested(Optional<String> token, ModelDeploymentStatus last) {
        return token.isPresent() && !token.get().equals(refreshedFor(last));
    }

    /** The next status with the refresh's progress recorded; {@code next.roles()} are today's counts. */
    static ModelDeploymentStatus recorded(
            ModelDeploymentStatus next, Optional<String> token, ModelDeploymentStatus last) {
        if (!requested(token, last)) {
            return next.withHooksRefresh(null, refreshedFor(last));
        }
        return done(next)
                ? next.withHooksRefresh(null, token.get())
                : next.withHooksRefresh(token.get(), refreshedFor(last));
    }

    /** What a status that cannot judge the refresh (a rejected spec) keeps of the last one. */
    static ModelDeploymentStatus kept(ModelDeploymentStatus next, ModelDeploymentStatus last) {
        return last == null ? next : next.withHooksRefresh(last.hooksRefreshing(), last.hooksRefreshedFor());
    }

    private static boolean done(ModelDeploymentStatus next) {
        return next.roles().stream()
                .allMatch(r -> r.hookOutdated() == 0 && r.imageOutdated() == 0 && r.ready() >= r.desired());
    }

    private static String refreshedFor(ModelDeploymentStatus last) {
        return last == null ? null : last.hooksRefreshedFor();
    }

    /** Whether a status field now names a token it did not name before. */
    static boolean changed(String before, String after) {
        return after != null && !Objects.equals(before, after);
    }
}
