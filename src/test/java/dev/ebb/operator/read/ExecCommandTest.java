package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sim.LocalProcesses;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ExecCommandTest {
    private static final String ECHO_ARGS = """
            import sys
            if __name__ == "__main__":
                print("ran with", sys.argv[1:])
            """;

    private record Run(int code, String stdout, String stderr) {}

    /** Runs the command as the container would, stdin left open afterwards as a websocket v4 client leaves it. */
    private static Run run(List<String> argv, byte[] stdin) throws IOException, InterruptedException {
        return run(argv, stdin, false);
    }

    private static Run run(List<String> argv, byte[] stdin, boolean stdinEnds)
            throws IOException, InterruptedException {
        Process process = LocalProcesses.builder(argv).start();
        OutputStream in = process.getOutputStream();
        in.write(stdin);
        in.flush();
        if (stdinEnds) {
            in.close();
        }
        try {
            assertThat(process.waitFor(10, TimeUnit.SECONDS))
                    .as("the command ends without stdin's end")
                    .isTrue();
            return new Run(
                    process.exitValue(),
                    new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                    new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            in.close();
            process.destroyForcibly();
        }
    }

    @Test
    void theScriptRunsAsTheMainModuleWithTheArgumentsAsGivenWhileStdinStaysOpen() throws Exception {
        ExecCommand command = ExecCommand.python(ECHO_ARGS, List.of("--path", "/m etrics;$(x)", "--n", "1"));

        Run run = run(command.argv(), command.stdin());

        assertThat(run).isEqualTo(new Run(0, "ran with ['--path', '/m etrics;$(x)', '--n', '1']\n", ""));
    }

    /** Left open, a cut stdin keeps the loader waiting until the exec's deadline, which no reader takes for an answer. */
    @Test
    void aScriptCutShortByAStreamThatEndsRunsNothingAndExitsNonZero() throws Exception {
        byte[] whole = ExecCommand.python(ECHO_ARGS, List.of()).stdin();
        byte[] cut = Arrays.copyOf(whole, whole.length - 10);

        Run run = run(ExecCommand.python(ECHO_ARGS, List.of()).argv(), cut, true);

        assertThat(run.code()).isNotZero();
        assertThat(run.stdout()).isEmpty();
        assertThat(run.stderr()).contains("cut at");
    }

    @Test
    void stdinThatIsNotALengthAndAScriptExitNonZero() throws Exception {
        List<String> argv = ExecCommand.python(ECHO_ARGS, List.of()).argv();

        assertThat(run(argv, "print('x')\n".getBytes(StandardCharsets.UTF_8)).code())
                .isNotZero();
        assertThat(run(argv, "-5\n".getBytes(StandardCharsets.UTF_8)).code()).isNotZero();
    }

    @Test
    void theMemberReadsRunThisWayAndTheirExecRequestLineStaysSmallWhateverTheScriptsWeigh() {
        String heavyScript = "#" + "x".repeat(1 << 20) + "\n";
        List<ExecCommand> commands = List.of(
                ReadCommand.forMember(member(), ExecLimits.MEMBER_READ.maxStdoutBytes())
                        .command()
                        .orElseThrow(),
                ConnectionRead.command(8000, Optional.empty()),
                ExecCommand.python(heavyScript, List.of("--port", "8000")));

        assertThat(commands)
                .allSatisfy(command -> assertThat(requestLine(command.argv())).hasSizeLessThan(2048));
        assertThat(commands.get(2).stdin()).hasSizeGreaterThan(1 << 20);
    }

    /** The line fabric8 sends for pods/exec: every argv item as its own {@code command} parameter. */
    static String requestLine(List<String> argv) {
        String query = argv.stream()
                .map(a -> "command=" + URLEncoder.encode(a, StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return "GET /api/v1/namespaces/some-namespace-of-63-characters/pods/some-pod-name-of-63-characters/exec?"
                + query + "&container=engine&stdin=true&stdout=true&stderr=true HTTP/1.1";
    }

    private static io.fabric8.kubernetes.api.model.Pod member() {
        return new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata()
                .withName("m")
                .withAnnotations(Map.of(dev.ebb.operator.api.Annotations.SCRAPE_PORT, "8000"))
                .endMetadata()
                .build();
    }
}
