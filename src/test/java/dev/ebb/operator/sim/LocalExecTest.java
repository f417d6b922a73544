package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.ExecResult;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LocalExecTest {
    private static final ExecLimits LIMITS = new ExecLimits(1024, Duration.ofSeconds(2));
    private final LocalExec exec = new LocalExec();
    private final Pod pod = new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .endMetadata()
            .withNewStatus()
            .withPodIP("127.0.3.4")
            .endStatus()
            .build();

    @AfterEach
    void stop() {
        exec.close();
    }

    private ExecResult run(List<String> argv, ExecLimits limits) {
        return exec.exec(pod, "main", argv, limits).await().atMost(Duration.ofSeconds(10));
    }

    @Test
    void returnsStdoutAndExitCodeWithThePodAddressInPlaceOfTheRenderedHost() {
        ExecResult result = run(
                List.of(
                        "python3",
                        "-c",
                        "import sys; print(sys.argv[1:]); sys.exit(3)",
                        "--host",
                        "127.0.0.1",
                        "$(id)"),
                LIMITS);

        assertThat(result).isInstanceOfSatisfying(ExecResult.Exited.class, exited -> {
            assertThat(exited.code()).isEqualTo(3);
            assertThat(new String(exited.stdout(), StandardCharsets.UTF_8))
                    .isEqualTo("['--host', '127.0.3.4', '$(id)']\n");
        });
    }

    @Test
    void outputOverTheCapStopsTheReadEarly() {
        long start = System.nanoTime();
        ExecResult result =
                run(List.of("python3", "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"), LIMITS);

        assertThat(result).isEqualTo(new ExecResult.Overflowed(1024));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void commandThatNeverEndsTimesOutAtTheDeadline() {
        long start = System.nanoTime();
        ExecResult result = run(List.of("sleep", "30"), new ExecLimits(1024, Duration.ofMillis(800)));

        assertThat(result).isInstanceOf(ExecResult.TimedOut.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isBetween(Duration.ofMillis(700), Duration.ofMillis(1800));
    }

    @Test
    void faultKnobs() {
        assertThat(exec.failWith("container main not found")
                        .exec(pod, "main", List.of("true"), LIMITS)
                        .await()
                        .indefinitely())
                .isEqualTo(new ExecResult.Failed("container main not found"));
        exec.failWith(null).hang(true);
        assertThat(run(List.of("true"), new ExecLimits(1024, Duration.ofMillis(300))))
                .isInstanceOf(ExecResult.TimedOut.class);
        exec.hang(false).extraOutput(2048);
        assertThat(run(List.of("true"), LIMITS)).isInstanceOf(ExecResult.Overflowed.class);
    }

    @Test
    void podWithoutAnAddressCannotBeExecuted() {
        Pod pending = new PodBuilder()
                .withNewMetadata()
                .withName("pending")
                .endMetadata()
                .build();

        assertThat(exec.exec(pending, "main", List.of("true"), LIMITS).await().indefinitely())
                .isInstanceOf(ExecResult.Failed.class);
    }

    @Test
    void cancellingTheReadKillsTheProcess() {
        var cancellable = exec.exec(pod, "main", List.of("sleep", "31"), LIMITS)
                .subscribe()
                .with(r -> {});
        await().atMost(Duration.ofSeconds(2)).until(() -> sleepers() == 1);

        cancellable.cancel();

        await().atMost(Duration.ofSeconds(2)).until(() -> sleepers() == 0);
    }

    private static long sleepers() {
        return ProcessHandle.current()
                .children()
                .filter(child -> child.info()
                        .arguments()
                        .map(args -> List.of(args).contains("31"))
                        .orElse(false))
                .count();
    }

    @Test
    void theConnectionReadIsToldThePodsOwnAddressSinceEveryEngineHereSharesOneConnectionTable() {
        List<String> argv = ConnectionRead.command(8000, Optional.empty()).argv();

        assertThat(PodAddressing.onPodAddress(argv, "127.0.3.4")).endsWith("--local-address", "127.0.3.4");
        assertThat(PodAddressing.onPodAddress(List.of("python3", "-c", "print()", "--port", "8000"), "127.0.3.4"))
                .doesNotContain("--local-address");
    }

    @Test
    void theRouterEnvoyHookAsksTheAdminInterfaceOnThePodsOwnLoopback() {
        List<String> rendered =
                List.of("/bin/bash", "/etc/ebb-router/drain-envoy.sh", "5", "30", "127.0.0.1", "19000", "g");

        assertThat(PodAddressing.onPodAddress(rendered, "10.244.0.5"))
                .containsExactly(
                        "/bin/bash",
                        "/etc/ebb-router/drain-envoy.sh",
                        "5",
                        "30",
                        LoopbackAddresses.loopbackOf("10.244.0.5"),
                        "19000",
                        "g");
        assertThat(PodAddressing.onPodAddress(
                        List.of("/bin/bash", "/tmp/other.sh", "5", "30", "127.0.0.1"), "10.244.0.5"))
                .as("another script's arguments stay as rendered")
                .endsWith("127.0.0.1");
    }
}
