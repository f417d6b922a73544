package dev.ebb.operator.drain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class DrainTimelinesTest {
    private static final DrainTimelines TIMELINES = new DrainTimelines();

    static Stream<Arguments> windows() {
        Stream.Builder<Arguments> rows = Stream.builder();
        for (int g : new int[] {15, 25, 26, 30, 44, 45, 3600}) {
            for (Engine engine : Engine.values()) {
                for (RoleKind kind : RoleKind.values()) {
                    rows.add(Arguments.of(g, engine, kind));
                }
            }
        }
        return rows.build();
    }

    @ParameterizedTest(name = "G={0} {1} {2}")
    @MethodSource("windows")
    void everyNumberOfTheWindowFollowsFromTheGrace(int g, Engine engine, RoleKind kind) {
        DrainTimeline t = TIMELINES.of(Optional.of(g), engine, kind, false, false, false);

        assertThat(t.hooked()).isTrue();
        assertThat(t.grace()).contains(g);
        assertThat(t.settle()).isEqualTo(5);
        assertThat(t.interval()).isEqualTo(1);
        assertThat(t.lastReadMargin()).isEqualTo(5);
        assertThat(t.readTimeout()).isEqualTo(2);
        assertThat(t.idleReturn()).isEqualTo(6);
        assertThat(t.lastReadStartsBy()).isEqualTo(g - 5);
        assertThat(t.sigtermBy()).isEqualTo(g - 3);
        boolean split = engine == Engine.SGLANG && kind != RoleKind.Server;
        assertThat(t.exitAfterSigterm()).isEqualTo(split ? Optional.of(20) : Optional.empty());
        assertThat(t.latestCleanHookReturn()).isEqualTo(split ? Optional.of(Math.max(0, g - 20)) : Optional.empty());
        assertThat(t.warnings())
                .extracting(DrainWarning::reason)
                .isEqualTo(split && g < 45 ? List.of("GraceTooShortForSplitRole") : List.of());
    }

    @ParameterizedTest(name = "G={0}")
    @ValueSource(ints = {11, 12, 15, 30, 45, 3600})
    void anEngineThatDrainsOnSigtermIsToldToFinishWithinWhatAnIdleReturnLeavesOfTheGrace(int g) {
        DrainTimeline sized = TIMELINES.of(Optional.of(g), Engine.VLLM, RoleKind.Server, false, false, true);
        DrainTimeline unsized = TIMELINES.of(Optional.of(g), Engine.VLLM, RoleKind.Server, false, false, false);
        DrainTimeline takeOver = TIMELINES.of(Optional.of(g), Engine.VLLM, RoleKind.Server, true, false, true);

        // the hook's idle return (6 s) plus the drain plus 5 s for the engine to exit fit in the grace; nothing when
        // none is left
        assertThat(sized.engineShutdown()).isEqualTo(g > 11 ? Optional.of(g - 11) : Optional.empty());
        sized.engineShutdown()
                .ifPresent(drain -> assertThat(sized.idleReturn() + drain + DrainTimelines.ENGINE_EXIT_MARGIN)
                        .isEqualTo(g));
        assertThat(unsized.engineShutdown()).isEmpty();
        assertThat(takeOver.engineShutdown()).isEmpty();
    }

    @Test
    void defaultGraceIsThirtySeconds() {
        DrainTimeline t = TIMELINES.of(Optional.empty(), Engine.VLLM, RoleKind.Server, false, false, false);

        assertThat(t.grace()).contains(30);
        assertThat(t.lastReadStartsBy()).isEqualTo(25);
        assertThat(t.sigtermBy()).isEqualTo(27);
    }

    @Test
    void splitSglangRoleAtTheDefaultGraceIsWarnedThatALateHookGetsKilled() {
        DrainTimeline t = TIMELINES.of(Optional.empty(), Engine.SGLANG, RoleKind.Decode, false, false, false);

        assertThat(t.latestCleanHookReturn()).contains(10);
        assertThat(t.warnings())
                .singleElement()
                .satisfies(w -> assertThat(w.message())
                        .contains("after 10 s")
                        .contains("killed at 30 s")
                        .contains("set terminationGracePeriodSeconds to 45"));
    }

    @Test
    void splitSglangRoleWhoseGraceCannotCoverEvenAnIdleHookIsToldSo() {
        DrainTimeline t = TIMELINES.of(Optional.of(15), Engine.SGLANG, RoleKind.Prefill, false, false, false);
        DrainTimeline boundary = TIMELINES.of(Optional.of(26), Engine.SGLANG, RoleKind.Decode, false, false, false);

        assertThat(t.latestCleanHookReturn()).contains(0);
        assertThat(t.warnings())
                .singleElement()
                .satisfies(w -> assertThat(w.message())
                        .contains("even an idle replica, whose hook returns after 6 s, is killed at 15 s")
                        .doesNotContainPattern("-\\d"));
        assertThat(boundary.latestCleanHookReturn()).contains(6);
        assertThat(boundary.warnings())
                .singleElement()
                .satisfies(w -> assertThat(w.message())
                        .contains("a hook returning after 6 s leaves too little")
                        .doesNotContain("even an idle replica"));
    }

    @Test
    void splitSglangRoleAt44IsStillWarned() {
        DrainTimeline t = TIMELINES.of(Optional.of(44), Engine.SGLANG, RoleKind.Decode, false, false, false);

        assertThat(t.latestCleanHookReturn()).contains(24);
        assertThat(t.warnings())
                .singleElement()
                .satisfies(w -> assertThat(w.message()).contains("after 24 s").contains("killed at 44 s"));
    }

    @Test
    void splitSglangRoleAt45HasItsTwentySecondsAfterAHookReturningBy25() {
        DrainTimeline t = TIMELINES.of(Optional.of(45), Engine.SGLANG, RoleKind.Prefill, false, false, false);

        assertThat(t.latestCleanHookReturn()).contains(25);
        assertThat(t.warnings()).isEmpty();
    }

    @Test
    void takeOverRoleHasNoHookKeepsItsGraceAsGivenAndIsWarned() {
        DrainTimeline unset = TIMELINES.of(Optional.empty(), Engine.VLLM, RoleKind.Server, true, false, false);
        DrainTimeline set = TIMELINES.of(Optional.of(120), Engine.VLLM, RoleKind.Server, true, false, false);

        assertThat(unset.hooked()).isFalse();
        assertThat(unset.grace()).isEmpty();
        assertThat(set.grace()).contains(120);
        assertThat(unset.warnings()).extracting(DrainWarning::reason).containsExactly("NoDrainHook");
    }

    @Test
    void anOrdinaryRoleIsWarnedOfNothing() {
        DrainTimeline t = TIMELINES.of(Optional.of(60), Engine.VLLM, RoleKind.Server, false, false, false);

        assertThat(t.warnings()).isEmpty();
    }
}
