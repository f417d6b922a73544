package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Annotations;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReadCommandTest {
    private static final int CAP = ExecLimits.MEMBER_READ.maxStdoutBytes();

    private static Pod member(Map<String, String> annotations) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("m")
                .withNamespace("ns")
                .withAnnotations(annotations)
                .endMetadata()
                .build();
    }

    private static List<String> argv(Map<String, String> annotations) {
        ReadCommand.Built built = ReadCommand.forMember(member(annotations), CAP);
        assertThat(built.refusal()).isNull();
        return built.command().orElseThrow().argv();
    }

    @Test
    void argvCarriesEachAnnotationAsItsOwnItemWithTheContractsBounds() {
        List<String> argv = argv(Map.of(
                Annotations.SCRAPE_PORT,
                "8443",
                Annotations.SCRAPE_SCHEME,
                "https",
                Annotations.SCRAPE_PATH,
                "/v1/metrics"));

        assertThat(argv)
                .containsExactly(
                        "python3",
                        "-c",
                        ExecCommand.LOADER,
                        "--scheme",
                        "https",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "8443",
                        "--path",
                        "/v1/metrics",
                        "--max-bytes",
                        "1048576",
                        "--timeout",
                        "2");
    }

    @Test
    void schemeAndPathDefaultToPlainHttpOnMetrics() {
        assertThat(argv(Map.of(Annotations.SCRAPE_PORT, "8000")))
                .containsSubsequence("--scheme", "http")
                .containsSubsequence("--path", "/metrics");
    }

    @Test
    void portIsCanonicalised() {
        assertThat(argv(Map.of(Annotations.SCRAPE_PORT, "08000"))).containsSubsequence("--port", "8000");
        assertThat(argv(Map.of(Annotations.SCRAPE_PORT, "65535"))).containsSubsequence("--port", "65535");
        assertThat(argv(Map.of(Annotations.SCRAPE_PORT, "1"))).containsSubsequence("--port", "1");
    }

    @Test
    void longestAcceptedPathIsPassedWhole() {
        String path = "/" + "a".repeat(255);

        assertThat(argv(Map.of(Annotations.SCRAPE_PORT, "8000", Annotations.SCRAPE_PATH, path)))
                .containsSubsequence("--path", path);
    }

    static Stream<Arguments> hostile() {
        return Stream.of(
                Arguments.of("path with a space", Annotations.SCRAPE_PATH, "/metrics extra"),
                Arguments.of("path with a line feed", Annotations.SCRAPE_PATH, "/metrics\nX-Injected: yes"),
                Arguments.of("path with CR LF", Annotations.SCRAPE_PATH, "/metrics\r\nX-Injected: yes"),
                Arguments.of("path with a tab", Annotations.SCRAPE_PATH, "/metrics\t"),
                Arguments.of("path with non-ASCII", Annotations.SCRAPE_PATH, "/m\u00e9trics"),
                Arguments.of("path one over the longest", Annotations.SCRAPE_PATH, "/" + "a".repeat(256)),
                Arguments.of("oversized path", Annotations.SCRAPE_PATH, "/" + "a".repeat(100_000)),
                Arguments.of("empty path", Annotations.SCRAPE_PATH, ""),
                Arguments.of("relative path", Annotations.SCRAPE_PATH, "metrics"),
                Arguments.of("scheme in capitals", Annotations.SCRAPE_SCHEME, "HTTP"),
                Arguments.of("scheme with a line feed", Annotations.SCRAPE_SCHEME, "http\n"),
                Arguments.of("oversized port", Annotations.SCRAPE_PORT, "8".repeat(100_000)),
                Arguments.of("port with spaces", Annotations.SCRAPE_PORT, " 8000 "),
                Arguments.of("port as a name", Annotations.SCRAPE_PORT, "metrics"),
                Arguments.of("port with a sign", Annotations.SCRAPE_PORT, "+8000"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostile")
    void hostileAnnotationIsRefusedAndNamed(String title, String annotation, String value) {
        Map<String, String> annotations = new HashMap<>(Map.of(Annotations.SCRAPE_PORT, "8000"));
        annotations.put(annotation, value);

        ReadCommand.Built built = ReadCommand.forMember(member(annotations), CAP);

        assertThat(built.command()).isEmpty();
        // the refusal ends up in events and logs: it names the annotation and never echoes its value
        assertThat(built.refusal())
                .contains(annotation)
                .doesNotContainPattern("[\\r\\n\\t]")
                .hasSizeLessThan(200);
    }

    @Test
    void podWithoutAnnotationsIsRefused() {
        Pod bare =
                new PodBuilder().withNewMetadata().withName("m").endMetadata().build();

        assertThat(ReadCommand.forMember(bare, CAP).refusal()).contains(Annotations.SCRAPE_PORT);
    }
}
