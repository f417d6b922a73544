package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.DrainStatus;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class HooksRefreshTest {
    private static ModelDeploymentStatus status(
            int ready, int hookOutdated, int imageOutdated, String refreshing, String refreshedFor) {
        RoleStatus server = new RoleStatus(
                "server",
                "Server",
                3,
                3,
                ready,
                3,
                false,
                hookOutdated,
                imageOutdated,
                0,
                0,
                new DrainStatus(30, 25, 27, 19, List.of()));
        return new ModelDeploymentStatus(
                1L,
                "Ready",
                null,
                List.of(server),
                null,
                null,
                List.of(),
                List.of(),
                List.of(),
                null,
                refreshing,
                refreshedFor);
    }

    static Stream<Arguments> progress() {
        return Stream.of(
                Arguments.of(
                        "no token asks for nothing",
                        Optional.empty(),
                        status(3, 2, 0, null, "t0"),
                        status(3, 2, 1, null, null),
                        false,
                        null,
                        "t0"),
                Arguments.of(
                        "a token already carried out asks for nothing",
                        Optional.of("t1"),
                        status(3, 2, 0, null, "t1"),
                        status(3, 2, 0, null, null),
                        false,
                        null,
                        "t1"),
                Arguments.of(
                        "a new token starts, keeping the last one done",
                        Optional.of("t2"),
                        status(3, 2, 0, null, "t1"),
                        status(3, 2, 0, null, null),
                        true,
                        "t2",
                        "t1"),
                Arguments.of(
                        "still under way while a replacement is not Ready",
                        Optional.of("t2"),
                        status(3, 1, 0, "t2", "t1"),
                        status(2, 0, 0, null, null),
                        true,
                        "t2",
                        "t1"),
                Arguments.of(
                        "done once nothing is behind and every role is Ready",
                        Optional.of("t2"),
                        status(2, 0, 0, "t2", "t1"),
                        status(3, 0, 0, null, null),
                        true,
                        null,
                        "t2"),
                Arguments.of(
                        "an older default image alone keeps it going",
                        Optional.of("t2"),
                        status(3, 0, 1, "t2", "t1"),
                        status(3, 0, 1, null, null),
                        true,
                        "t2",
                        "t1"),
                Arguments.of(
                        "a first status with nothing behind is done at once",
                        Optional.of("t1"),
                        null,
                        status(3, 0, 0, null, null),
                        true,
                        null,
                        "t1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("progress")
    void theTokenIsRecordedAsDoneOnlyOnceNothingIsBehindAndEveryRoleIsReady(
            String why,
            Optional<String> token,
            ModelDeploymentStatus last,
            ModelDeploymentStatus next,
            boolean requested,
            String refreshing,
            String refreshedFor) {
        ModelDeploymentStatus recorded = HooksRefresh.recorded(next, token, last);

        assertThat(HooksRefresh.requested(token, last)).isEqualTo(requested);
        assertThat(recorded.hooksRefreshing()).isEqualTo(refreshing);
        assertThat(recorded.hooksRefreshedFor()).isEqualTo(refreshedFor);
    }

    @Test
    void theStartAndTheEndAreEachToldOnce() {
        ModelDeploymentStatus before = status(3, 3, 3, null, "t1");
        ModelDeploymentStatus started = status(3, 3, 3, "t2", "t1");
        ModelDeploymentStatus done = status(3, 0, 0, null, "t2");

        assertThat(StatusNews.between(before, started))
                .extracting(StatusNews.News::reason)
                .containsExactly(StatusNews.REASON_REFRESH_STARTED);
        assertThat(StatusNews.between(before, started).get(0).message())
                .contains("t2")
                .contains("role server has 3 Pod(s) with an older drain hook and 3 with an older default image");
        assertThat(StatusNews.between(started, started)).isEmpty();
        assertThat(StatusNews.between(started, done))
                .extracting(StatusNews.News::reason)
                .containsExactly(StatusNews.REASON_REFRESHED);
        assertThat(StatusNews.between(done, done)).isEmpty();
    }
}
