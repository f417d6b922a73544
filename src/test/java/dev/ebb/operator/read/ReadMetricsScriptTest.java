package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.drain.HookFixtures;
import dev.ebb.operator.sim.CannedListener;
import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.LoopbackAddresses;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real read script under python3, against a listener that answers whatever bytes a test gives it: the
 * script's own checks and exit codes, including the ones the operator's argv never provokes.
 */
class ReadMetricsScriptTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    private static final int OK = 0;
    private static final int HTTP_ERROR = 3;
    private static final int TLS_FAILURE = 4;
    private static final int TOO_LARGE = 6;
    private static final int OTHER = 7;
    private static final byte[] METRICS = "vllm:num_requests_running 0\n".getBytes(StandardCharsets.US_ASCII);

    private final List<CannedListener> listeners = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (CannedListener listener : listeners) {
            listener.close();
        }
    }

    private record Run(int exit, byte[] stdout, String stderr) {}

    private CannedListener answering(String head, byte[] body) throws IOException {
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        answer.writeBytes(head.getBytes(StandardCharsets.ISO_8859_1));
        answer.writeBytes(body);
        CannedListener listener = new CannedListener(ADDRESSES.next(), 0, answer.toByteArray());
        listeners.add(listener);
        return listener;
    }

    private static Run run(String... args) throws Exception {
        return run(Map.of(), args);
    }

    /** @param environment added to the interpreter's environment */
    private static Run run(Map<String, String> environment, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("python3", "-c", ReadCommand.SCRIPT));
        argv.addAll(List.of(args));
        Path stderr = Files.createTempFile("read-metrics", ".err");
        try {
            ProcessBuilder builder = LocalProcesses.builder(argv).redirectError(stderr.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            byte[] stdout = process.getInputStream().readAllBytes();
            assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
            return new Run(process.exitValue(), stdout, Files.readString(stderr));
        } finally {
            Files.delete(stderr);
        }
    }

    private static Run read(CannedListener listener, String scheme, String path) throws Exception {
        return run(
                "--scheme",
                scheme,
                "--host",
                listener.host(),
                "--port",
                Integer.toString(listener.port()),
                "--path",
                path);
    }

    @Test
    void plainAnswerIsPrintedWithExitZero() throws Exception {
        CannedListener engine = answering("HTTP/1.0 200 OK\r\nContent-Length: " + METRICS.length + "\r\n\r\n", METRICS);

        Run run = read(engine, "http", "/metrics");

        assertThat(run.exit()).isEqualTo(OK);
        assertThat(run.stdout()).isEqualTo(METRICS);
        assertThat(engine.requests()).singleElement().asString().startsWith("GET /metrics HTTP/1.0\r\n");
    }

    /** How uvicorn frames an answer without Content-Length, whatever the request's HTTP version. */
    private static String chunked(String... chunks) {
        StringBuilder framed = new StringBuilder();
        for (String chunk : chunks) {
            framed.append(Integer.toHexString(chunk.length()))
                    .append("\r\n")
                    .append(chunk)
                    .append("\r\n");
        }
        return framed.append("0\r\n\r\n").toString();
    }

    private static final String CHUNKED_HEAD =
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; version=0.0.4; charset=utf-8\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n";

    @Test
    void chunkedAnswerIsPrintedDecodedWhereverItsChunksSplitALine() throws Exception {
        String page = "vllm:num_requests_running{engine=\"0\"} 0.0\nvllm:num_requests_running{engine=\"1\"} 3.0\n";
        int inside = page.indexOf("running{engine=\"1") + 3;
        CannedListener engine = answering(
                CHUNKED_HEAD,
                chunked(page.substring(0, 10), page.substring(10, inside), page.substring(inside))
                        .getBytes(StandardCharsets.US_ASCII));

        Run run = read(engine, "http", "/metrics");

        assertThat(run.exit()).as(run.stderr()).isEqualTo(OK);
        assertThat(new String(run.stdout(), StandardCharsets.US_ASCII)).isEqualTo(page);
    }

    @Test
    void chunkExtensionsAndTrailersAreNotPartOfTheBody() throws Exception {
        CannedListener engine = answering(
                CHUNKED_HEAD,
                ("1c;name=value\r\nvllm:num_requests_running 0\n\r\n0\r\nX-Trailer: t\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));

        Run run = read(engine, "http", "/metrics");

        assertThat(run.exit()).as(run.stderr()).isEqualTo(OK);
        assertThat(new String(run.stdout(), StandardCharsets.US_ASCII)).isEqualTo("vllm:num_requests_running 0\n");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "1c\r\nvllm:num_requests_running 0\n\r\n",
                "1c\r\nvllm:num_requests_running 0\n\r\n0\r\n",
                "1c\r\nvllm:num_requests_run",
                "1c\r\nvllm:num_requests_running 0\nXX0\r\n\r\n",
                "zz\r\nvllm:num_requests_running 0\n\r\n0\r\n\r\n",
                "-1c\r\nvllm:num_requests_running 0\n\r\n0\r\n\r\n",
                "\r\nvllm:num_requests_running 0\n\r\n0\r\n\r\n"
            })
    void chunkedAnswerCutShortOrMisframedIsABrokenAnswer(String body) throws Exception {
        Run run = read(answering(CHUNKED_HEAD, body.getBytes(StandardCharsets.US_ASCII)), "http", "/metrics");

        assertThat(run.exit()).isEqualTo(OTHER);
        assertThat(run.stdout()).isEmpty();
    }

    @Test
    void chunkedBodyOverTheCapIsTooLarge() throws Exception {
        String chunk = "#".repeat(60_000) + "\n";
        CannedListener engine = answering(CHUNKED_HEAD, chunked(chunk, chunk).getBytes(StandardCharsets.US_ASCII));

        Run run = run("--host", engine.host(), "--port", Integer.toString(engine.port()), "--max-bytes", "100000");

        assertThat(run.exit()).isEqualTo(TOO_LARGE);
        assertThat(run.stdout()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Transfer-Encoding: gzip, chunked", "Content-Encoding: gzip"})
    void anEncodedBodyIsNotPrintedAsThePage(String header) throws Exception {
        Run run = read(answering("HTTP/1.1 200 OK\r\n" + header + "\r\n\r\n", METRICS), "http", "/metrics");

        assertThat(run.exit()).isEqualTo(OTHER);
        assertThat(run.stdout()).isEmpty();
    }

    @Test
    void proxyVariablesInTheEnvironmentAreNotFollowed() throws Exception {
        CannedListener engine = answering("HTTP/1.0 200 OK\r\nContent-Length: " + METRICS.length + "\r\n\r\n", METRICS);

        Run run = run(HookFixtures.PROXIES, "--host", engine.host(), "--port", Integer.toString(engine.port()));

        assertThat(run.exit()).as(run.stderr()).isEqualTo(OK);
        assertThat(run.stdout()).isEqualTo(METRICS);
    }

    @Test
    void portOutsideOneTo65535IsBadArgumentsNotAnotherPort() throws Exception {
        CannedListener engine = answering("HTTP/1.0 200 OK\r\n\r\n", METRICS);

        // the resolver takes a port modulo 65536: unchecked, this would read the listener's port
        Run wrapped = run("--host", engine.host(), "--port", Integer.toString(65536 + engine.port()));
        Run zero = run("--host", engine.host(), "--port", "0");

        assertThat(wrapped.exit()).isEqualTo(OTHER);
        assertThat(zero.exit()).isEqualTo(OTHER);
        assertThat(wrapped.stdout()).isEmpty();
        assertThat(engine.requests()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/a b", "/a\r\nX-Injected: yes", "/a\nb", "/a\tb", "/a\u007fb", "metrics", ""})
    void pathThatCouldBreakTheRequestLineIsBadArguments(String path) throws Exception {
        CannedListener engine = answering("HTTP/1.0 200 OK\r\n\r\n", METRICS);

        Run run = read(engine, "http", path);

        assertThat(run.exit()).isEqualTo(OTHER);
        assertThat(run.stdout()).isEmpty();
        assertThat(engine.requests()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "10.0.0.1",
                "localhost",
                "127.0.0.1 x",
                "127.0.0.1\r\nX-Injected: yes",
                "127.1",
                "::1",
                "example.com"
            })
    void hostThatIsNotAnIpv4LoopbackLiteralIsBadArguments(String host) throws Exception {
        Run run = run("--host", host, "--port", "8000");

        assertThat(run.exit()).isEqualTo(OTHER);
        assertThat(run.stderr()).as("refused before any connection is tried").contains("bad arguments: --host");
    }

    @Test
    void answerOverTheCapIsTooLargeEvenWhenTheHeadersTookTheRoom() throws Exception {
        // 200 KiB of headers and a 1 MiB body: a cut at the cap leaves a body under it, which must not pass as the page
        String headers = "HTTP/1.0 200 OK\r\n" + ("X-Padding: " + "p".repeat(1000) + "\r\n").repeat(200) + "\r\n";
        CannedListener engine = answering(headers, "#".repeat(1024 * 1024).getBytes(StandardCharsets.US_ASCII));

        Run run = read(engine, "http", "/metrics");

        assertThat(run.exit()).isEqualTo(TOO_LARGE);
        assertThat(run.stdout()).isEmpty();
    }

    @Test
    void bodyShorterThanItsContentLengthIsABrokenAnswer() throws Exception {
        CannedListener engine = answering("HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\n", METRICS);

        Run run = read(engine, "http", "/metrics");

        assertThat(run.exit()).isEqualTo(OTHER);
        assertThat(run.stdout()).isEmpty();
    }

    @Test
    void plainTextAnswerToATlsHelloIsATlsFailure() throws Exception {
        CannedListener plain = answering("HTTP/1.0 400 Bad Request\r\n\r\n", new byte[0]);

        Run run = read(plain, "https", "/metrics");

        assertThat(run.exit()).isEqualTo(TLS_FAILURE);
        assertThat(plain.requests())
                .singleElement()
                .satisfies(hello -> assertThat(hello.charAt(0)).isEqualTo((char) 0x16));
    }

    @Test
    void errorStatusIsAnHttpError() throws Exception {
        assertThat(read(answering("HTTP/1.0 503 Service Unavailable\r\n\r\n", METRICS), "http", "/metrics")
                        .exit())
                .isEqualTo(HTTP_ERROR);
    }

    @Test
    void redirectIsAnUnexpectedAnswer() throws Exception {
        Run run = read(
                answering("HTTP/1.0 302 Found\r\nLocation: http://example.com/\r\n\r\n", METRICS), "http", "/metrics");

        assertThat(run.exit()).isEqualTo(OTHER);
        assertThat(run.stdout()).isEmpty();
    }

    @Test
    void answerThatIsNotHttpIsAnUnexpectedAnswer() throws Exception {
        Run run = read(answering("SSH-2.0-OpenSSH_9.6\r\n\r\n", METRICS), "http", "/metrics");
        Run garbage =
                read(answering("", new byte[] {0, 1, 2, (byte) 0xff, '\r', '\n', '\r', '\n', 3}), "http", "/metrics");

        assertThat(run.exit()).isEqualTo(OTHER);
        assertThat(garbage.exit()).isEqualTo(OTHER);
        assertThat(run.stdout()).isEmpty();
        assertThat(garbage.stdout()).isEmpty();
    }
}
