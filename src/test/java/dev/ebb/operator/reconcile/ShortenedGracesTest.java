package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ShortenedGracesTest {
    private static Pod pod(boolean deleted, Long deletionGrace, Long ownGrace) {
        return pod(deleted, deletionGrace, ownGrace, "Running");
    }

    private static Pod pod(boolean deleted, Long deletionGrace, Long ownGrace, String phase) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("qwen-server-r0-m0")
                .withUid("uid-0")
                .withDeletionTimestamp(deleted ? "2026-01-01T00:00:00Z" : null)
                .withDeletionGracePeriodSeconds(deletionGrace)
                .endMetadata()
                .withNewSpec()
                .withTerminationGracePeriodSeconds(ownGrace)
                .endSpec()
                .withNewStatus()
                .withPhase(phase)
                .endStatus()
                .build();
    }

    static Stream<Arguments> deletions() {
        return Stream.of(
                Arguments.of("deleted with a shorter grace", pod(true, 5L, 30L), true),
                Arguments.of("deleted with its own grace", pod(true, 30L, 30L), false),
                Arguments.of("deleted with a longer grace", pod(true, 60L, 30L), false),
                Arguments.of("deleted, no grace recorded", pod(true, null, 30L), false),
                Arguments.of("not deleted", pod(false, null, 30L), false),
                Arguments.of("no grace of its own", pod(true, 5L, null), false),
                // the kubelet's own last delete, grace 0, once its containers stopped and it wrote a terminal phase
                // (pkg/kubelet/status/status_manager.go, canBeDeleted and syncPod, Kubernetes v1.37.2)
                Arguments.of("removed by its kubelet after it succeeded", pod(true, 0L, 30L, "Succeeded"), false),
                Arguments.of("removed by its kubelet after it failed", pod(true, 0L, 30L, "Failed"), false),
                Arguments.of("forced while it runs", pod(true, 0L, 30L, "Running"), true),
                Arguments.of("deleted with a shorter grace, no status yet", pod(true, 5L, 30L, null), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("deletions")
    void onlyAPodDeletedWithLessGraceThanItsOwnIsShortened(String name, Pod pod, boolean shortened) {
        assertThat(ShortenedGraces.among(List.of(pod))).hasSize(shortened ? 1 : 0);
    }

    @org.junit.jupiter.api.Test
    void theMessageSaysHowLongRequestsMayStillRun() {
        assertThat(ShortenedGraces.among(List.of(pod(true, 5L, 30L))))
                .singleElement()
                .satisfies(s -> {
                    assertThat(s.uid()).isEqualTo("uid-0");
                    assertThat(s.message())
                            .startsWith(
                                    "Pod qwen-server-r0-m0 was deleted with a grace of 5 s, shorter than its own 30 s: "
                                            + "its requests have at most 5 s from the deletion to finish");
                });
    }
}
