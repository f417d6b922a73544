package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReadOutcomeTest {
    private static final List<InFlightGauges.Gauge> VLLM = InFlightGauges.of(Engine.VLLM);

    private static ExecResult exited(int code, String stdout) {
        return new ExecResult.Exited(code, stdout.getBytes(StandardCharsets.UTF_8));
    }

    static Stream<Arguments> outcomes() {
        return Stream.of(
                Arguments.of(
                        "idle page",
                        exited(0, "vllm:num_requests_running 0\nvllm:num_requests_waiting 0\n"),
                        new Reading.Idle()),
                Arguments.of(
                        "busy page",
                        exited(0, "vllm:num_requests_running 2\nvllm:num_requests_waiting 1\n"),
                        new Reading.Busy(3)),
                Arguments.of(
                        "page without one gauge",
                        exited(0, "vllm:num_requests_running 0\n"),
                        new Reading.Partial(List.of("vllm:num_requests_waiting"))),
                Arguments.of(
                        "empty output with exit 0", exited(0, ""), new Reading.Failed("the body holds no metrics")),
                Arguments.of(
                        "HTML with exit 0",
                        exited(0, "<html><body>Not here</body></html>\n"),
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of(
                        "bytes that are not UTF-8 with exit 0",
                        new ExecResult.Exited(0, new byte[] {(byte) 0xff, (byte) 0xfe, 0, '{', '\n', (byte) 0xc3}),
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of(
                        "gauge with garbage for a value",
                        exited(0, "vllm:num_requests_running zero\nvllm:num_requests_waiting 0\n"),
                        new Reading.Failed("line 1 is neither a comment nor a sample")),
                Arguments.of("refused", exited(2, ""), new Reading.Failed("the engine refused the connection")),
                Arguments.of("HTTP error", exited(3, ""), new Reading.Failed("the engine answered an HTTP error")),
                Arguments.of(
                        "TLS failure", exited(4, ""), new Reading.Failed("the TLS handshake with the engine failed")),
                Arguments.of(
                        "engine timeout", exited(5, ""), new Reading.Failed("the engine did not answer within 2 s")),
                Arguments.of(
                        "page over the cap",
                        exited(6, ""),
                        new Reading.Failed("the engine's metrics page is over the size cap")),
                Arguments.of(
                        "interpreter crash",
                        exited(1, "Traceback (most recent call last):\n"),
                        new Reading.Failed("the read script exited with code 1")),
                Arguments.of(
                        "anything else, with output that looks like metrics",
                        exited(7, "vllm:num_requests_running 0\n"),
                        new Reading.Failed("the read script exited with code 7")),
                Arguments.of(
                        "no python3 in the container",
                        exited(127, ""),
                        new Reading.Failed("the read script exited with code 127")),
                Arguments.of("killed", exited(137, ""), new Reading.Failed("the read script exited with code 137")),
                Arguments.of(
                        "output over the exec cap",
                        new ExecResult.Overflowed(1048576),
                        new Reading.Failed("the read printed more than 1048576 bytes")),
                Arguments.of(
                        "exec deadline",
                        new ExecResult.TimedOut(Duration.ofSeconds(5)),
                        new Reading.Failed("the read took longer than 5 s")),
                Arguments.of(
                        "exec refused",
                        new ExecResult.Failed("HTTP 403: forbidden"),
                        new Reading.Failed("exec failed: HTTP 403: forbidden")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outcomes")
    void execOutcomeBecomesItsReading(String title, ExecResult result, Reading expected) {
        assertThat(ReadOutcome.interpret(result, VLLM)).isEqualTo(expected);
    }
}
