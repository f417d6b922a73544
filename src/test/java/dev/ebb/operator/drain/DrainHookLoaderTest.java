package dev.ebb.operator.drain;

import static dev.ebb.operator.drain.HookFixtures.ADDRESSES;
import static dev.ebb.operator.drain.HookFixtures.PORT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.sim.FakeEngine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rendered hook runs the script the kubelet mounted from the hook's ConfigMap. Whatever keeps the script from
 * running (no file: the ConfigMap deleted before the kubelet mounted it, or the key gone; a file that is not the
 * script) must never bring SIGTERM at once: the hook then holds until its own deadline, as it would for an engine it
 * cannot prove idle, and still returns 0.
 */
class DrainHookLoaderTest {
    private static final int GRACE = 12;
    private static final DrainTimeline TIMELINE =
            new DrainTimelines().of(Optional.of(GRACE), Engine.VLLM, RoleKind.Server, false, false, false);

    @TempDir
    Path mount;

    private static List<String> rendered() {
        return DrainHook.command(
                TIMELINE, "http", List.of(EnginePod.LOOPBACK), PORT, "/metrics", InFlightGauges.of(Engine.VLLM));
    }

    /**
     * Each line the hook writes also reaches the container's log (its main process's stderr, where kubectl logs reads),
     * and how it ended goes into the termination message, which the kubelet reports in the container's state.
     */
    @Test
    void theMountedScriptRunsWithTheRenderedArgumentsAndWritesToTheContainersLogAndTerminationMessage()
            throws Exception {
        Path script = Files.writeString(mount.resolve(DrainHook.FILE), DrainHook.SCRIPT);
        Path containerLog = mount.resolve("container.log");
        Path terminationLog = mount.resolve("termination-log");
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            HookRun run = HookRun.run(
                    HookFixtures.onThisMachine(rendered(), script, containerLog, terminationLog), engine.host());

            assertThat(run.exitCode()).isZero();
            assertThat(run.lines()).last().asString().contains("idle on two consecutive reads");
            assertThat(Files.readAllLines(containerLog))
                    .isEqualTo(run.lines().stream()
                            .map(line -> "ebb drain hook: " + line)
                            .toList());
            assertThat(HookEnding.in(Files.readString(terminationLog))).hasValueSatisfying(ending -> {
                assertThat(ending.kind()).isEqualTo(HookEnding.Kind.IDLE);
                assertThat(ending.line()).isEqualTo(run.lines().get(run.lines().size() - 1));
            });
        }
    }

    @Test
    void aMissingScriptHoldsUntilTheHooksDeadlineAndSaysSoInTheContainersLogAndTerminationMessage() throws Exception {
        Path containerLog = mount.resolve("container.log");
        Path terminationLog = mount.resolve("termination-log");
        HookRun run = HookRun.run(
                HookFixtures.onThisMachine(rendered(), mount.resolve(DrainHook.FILE), containerLog, terminationLog),
                "127.0.0.1");

        assertHeldToTheDeadline(run);
        assertThat(Files.readString(containerLog)).startsWith("ebb drain hook: cannot run");
        assertThat(HookEnding.in(Files.readString(terminationLog)).map(HookEnding::kind))
                .contains(HookEnding.Kind.NO_SCRIPT);
    }

    @Test
    void aScriptThatDoesNotCompileOrIsADirectoryHoldsUntilTheHooksDeadline() throws Exception {
        Path garbled = Files.writeString(
                mount.resolve(DrainHook.FILE), DrainHook.SCRIPT.substring(0, DrainHook.SCRIPT.length() / 2) + "\n)(");

        assertHeldToTheDeadline(HookRun.run(HookFixtures.onThisMachine(rendered(), garbled), "127.0.0.1"));
        assertHeldToTheDeadline(HookRun.run(HookFixtures.onThisMachine(rendered(), mount), "127.0.0.1"));
    }

    private static void assertHeldToTheDeadline(HookRun run) {
        assertThat(run.exitCode()).isZero();
        assertThat(run.lines()).anySatisfy(line -> assertThat(line).startsWith("ebb drain hook: cannot run"));
        assertThat(run.took().toMillis() / 1000.0)
                .as("held until the hook's own deadline, %d s", TIMELINE.sigtermBy())
                .isBetween(TIMELINE.sigtermBy() - 0.1, TIMELINE.sigtermBy() + 3.0);
    }
}
