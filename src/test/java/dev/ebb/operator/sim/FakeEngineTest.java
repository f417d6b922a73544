package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class FakeEngineTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    private final HttpClient http = HttpClient.newHttpClient();
    private FakeEngine engine;

    @AfterEach
    void stop() {
        if (engine != null) {
            engine.close();
        }
    }

    private LoadGenerator load(int tokens, long tokenMs) {
        FakeEngine e = engine;
        return new LoadGenerator(
                () -> Optional.of(new RouteTarget("p", URI.create("http://" + e.host() + ":" + e.port()))),
                1,
                tokens,
                Duration.ofMillis(tokenMs));
    }

    private String metrics() throws Exception {
        return http.send(HttpRequest.newBuilder(engine.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /** Sums every series of every in-flight gauge, the way the drain does. */
    private long inFlightOnPage(String page) {
        long sum = 0;
        for (String gauge : InFlightGauges.of(engine.engine()).stream()
                .flatMap(g -> g.names().stream())
                .toList()) {
            Matcher m = Pattern.compile("(?m)^" + Pattern.quote(gauge) + "\\{[^}]*\\} ([0-9.]+)$")
                    .matcher(page);
            while (m.find()) {
                sum += (long) Double.parseDouble(m.group(1));
            }
        }
        return sum;
    }

    /** A kubelet worker being shut down kills its engine from an interrupted thread, and a restart binds the port again. */
    @Test
    void anEngineKilledFromAnInterruptedThreadHasFreedItsPortOnReturn() throws Exception {
        String host = ADDRESSES.next();
        for (int i = 0; i < 20; i++) {
            engine = FakeEngine.start(Engine.VLLM, host, 8000, "m");
            Thread.currentThread().interrupt();
            try {
                engine.kill();
            } finally {
                assertThat(Thread.interrupted())
                        .as("the interrupt is kept for the caller")
                        .isTrue();
            }
        }
        engine = FakeEngine.start(Engine.VLLM, host, 8000, "m");

        assertThat(engine.state()).isEqualTo(FakeEngine.State.SERVING);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void streamsAWholeCompletionEndingInDone(Engine kind) throws Exception {
        engine = FakeEngine.start(kind, ADDRESSES.next(), 8000, "Qwen/Qwen3-8B");

        LoadGenerator.Request r = load(5, 10).send();

        assertThat(r.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(r.why()).isEqualTo("5 tokens");
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void gaugesCountExactlyTheRequestsHeldAcrossSeveralSeries(Engine kind) throws Exception {
        engine = FakeEngine.start(kind, ADDRESSES.next(), 8000, "Qwen/Qwen3-8B");
        LoadGenerator load = load(40, 50);
        for (int i = 0; i < 11; i++) {
            CompletableFuture.runAsync(load::send);
        }

        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 11);
        String page = metrics();

        assertThat(inFlightOnPage(page)).isEqualTo(11);
        for (String gauge :
                InFlightGauges.of(kind).stream().map(InFlightGauges.Gauge::name).toList()) {
            assertThat(page).contains("# HELP " + gauge + " ").contains("# TYPE " + gauge + " gauge");
            assertThat(page.lines().filter(l -> l.startsWith(gauge + "{")).count())
                    .isEqualTo(2);
        }
        assertThat(page).contains("_created{").contains("_total{");
        assertThat(page).contains(kind == Engine.VLLM ? "engine=\"1\"" : "dp_rank=\"1\"");
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 0);
        assertThat(inFlightOnPage(metrics())).isZero();
    }

    @Test
    void vllmAbortsEveryRunningStreamOnSigterm() throws Exception {
        engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), 8000, "m");
        LoadGenerator load = load(200, 20).start(Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);

        engine.sigterm();
        load.stop(Duration.ofSeconds(3));

        assertThat(engine.exited()).isTrue();
        assertThat(load.count(LoadGenerator.Outcome.CUT)).isEqualTo(1);
        assertThat(load.count(LoadGenerator.Outcome.COMPLETED)).isZero();
    }

    @Test
    void killCutsWhatSglangStillHolds() throws Exception {
        engine = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), 8000, "m");
        CompletableFuture<LoadGenerator.Request> held = CompletableFuture.supplyAsync(load(500, 20)::send);
        await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 1);
        engine.sigterm();

        engine.kill();

        assertThat(held.get().outcome()).isEqualTo(LoadGenerator.Outcome.CUT);
    }

    @Test
    void metricsFaults() throws Exception {
        engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), 8000, "m");

        engine.faults().missingGauge("vllm:num_requests_waiting");
        assertThat(metrics()).doesNotContain("vllm:num_requests_waiting").contains("vllm:num_requests_running");

        engine.faults().missingGauge(null).oversizedMetrics(2 * 1024 * 1024);
        assertThat(metrics().length()).isGreaterThanOrEqualTo(2 * 1024 * 1024);

        engine.faults().oversizedMetrics(0).notMetrics(true);
        assertThat(metrics()).startsWith("<html>");

        engine.faults().notMetrics(false).metricsStatus(500);
        assertThat(http.send(
                                HttpRequest.newBuilder(engine.uri("/metrics")).build(),
                                HttpResponse.BodyHandlers.discarding())
                        .statusCode())
                .isEqualTo(500);

        engine.faults().metricsStatus(200).slowMetrics(Duration.ofMillis(700));
        long start = System.nanoTime();
        metrics();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(700));
    }

    /** The answer to a hand-made request, as bytes: the test must see the framing a client library would hide. */
    private byte[] rawMetrics(String version) throws Exception {
        try (Socket socket = new Socket(engine.host(), engine.port())) {
            socket.setSoTimeout(5000);
            socket.getOutputStream()
                    .write(("GET /metrics " + version + "\r\nHost: " + engine.host() + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            return socket.getInputStream().readAllBytes();
        }
    }

    /** As vLLM 0.32.0 answers (RealVllmIT): framed by a Content-Length, whatever the request's version. */
    @ParameterizedTest
    @ValueSource(strings = {"HTTP/1.0", "HTTP/1.1"})
    void vllmMetricsComeWithAContentLength(String version) throws Exception {
        engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), 8000, "m");

        String answer = new String(rawMetrics(version), StandardCharsets.ISO_8859_1);
        String head = answer.substring(0, answer.indexOf("\r\n\r\n")).toLowerCase(Locale.ROOT);
        String page = answer.substring(head.length() + 4);
        assertThat(head).contains("content-length: " + page.length()).doesNotContain("transfer-encoding");
        assertThat(page).contains("# TYPE vllm:num_requests_running gauge").endsWith("\n");
    }

    @ParameterizedTest
    @CsvSource({"SGLANG, HTTP/1.0", "SGLANG, HTTP/1.1"})
    void sglangMetricsComeChunkedInSeveralChunksOneEndingInsideAGaugeLine(Engine kind, String version)
            throws Exception {
        engine = FakeEngine.start(kind, ADDRESSES.next(), 8000, "m");

        String answer = new String(rawMetrics(version), StandardCharsets.ISO_8859_1);
        String head = answer.substring(0, answer.indexOf("\r\n\r\n")).toLowerCase(Locale.ROOT);
        assertThat(head).contains("transfer-encoding: chunked").doesNotContain("content-length");
        String framed = answer.substring(head.length() + 4);
        StringBuilder page = new StringBuilder();
        List<Integer> ends = new ArrayList<>();
        int at = 0;
        while (true) {
            int lineEnd = framed.indexOf("\r\n", at);
            int size = Integer.parseInt(framed.substring(at, lineEnd), 16);
            if (size == 0) {
                assertThat(framed.substring(lineEnd)).isEqualTo("\r\n\r\n");
                break;
            }
            page.append(framed, lineEnd + 2, lineEnd + 2 + size);
            ends.add(page.length());
            assertThat(framed.substring(lineEnd + 2 + size, lineEnd + 4 + size)).isEqualTo("\r\n");
            at = lineEnd + 4 + size;
        }

        assertThat(ends).hasSizeGreaterThanOrEqualTo(3);
        assertThat(page.toString())
                .contains("# TYPE " + InFlightGauges.of(kind).get(0).name() + " gauge");
        assertThat(ends.subList(0, ends.size() - 1)).anySatisfy(end -> {
            String line = page.substring(page.lastIndexOf("\n", end - 1) + 1, page.indexOf("\n", end));
            assertThat(InFlightGauges.of(kind)).anyMatch(g -> line.startsWith(g.name()));
            assertThat(page.charAt(end - 1)).isNotEqualTo('\n');
        });
    }

    @Test
    void trickledMetricsArriveAByteAtATimeAndEveryReadIsCounted() throws Exception {
        engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), 8000, "m");
        engine.faults().trickleMetrics(Duration.ofMillis(100));

        long start = System.nanoTime();
        HttpResponse<InputStream> response = http.send(
                HttpRequest.newBuilder(engine.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = response.body()) {
            assertThat(new String(body.readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("# HELP");
        }

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        assertThat(engine.metricsReads()).isEqualTo(1);
    }

    @Test
    void servesTlsWhenAskedTo() throws Exception {
        engine = FakeEngine.start(
                Engine.SGLANG, ADDRESSES.next(), 8443, "m", new EngineFaults(), SelfSignedTls.serverContext());

        assertThat(engine.uri("/metrics").getScheme()).isEqualTo("https");
        HttpClient trusting = HttpClient.newBuilder()
                .sslContext(SelfSignedTls.trustingClientContext())
                .build();
        HttpResponse<String> page = trusting.send(
                HttpRequest.newBuilder(engine.uri("/metrics"))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("# TYPE sglang:num_running_reqs gauge");
        assertThat(inFlightOnPage(page.body())).isZero();
        HttpRequest plain = HttpRequest.newBuilder(URI.create("http://" + engine.host() + ":8443/metrics"))
                .timeout(Duration.ofSeconds(2))
                .build();
        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                        () -> http.send(plain, HttpResponse.BodyHandlers.ofString())))
                .isInstanceOf(java.io.IOException.class);
    }

    @Test
    void closesAKeepAliveConnectionIdleForFiveSecondsAsUvicornDoes() throws Exception {
        engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), 8000, "m");
        Socket socket = new Socket(engine.host(), engine.port());
        try (KubeProxyService.Connection connection = new KubeProxyService.Connection("p", socket)) {
            assertThat(connection.stream(2, Duration.ofMillis(10)).outcome())
                    .isEqualTo(LoadGenerator.Outcome.COMPLETED);
            long idleFrom = System.nanoTime();
            assertThat(connection.stream(2, Duration.ofMillis(10)).outcome())
                    .as("kept alive between requests")
                    .isEqualTo(LoadGenerator.Outcome.COMPLETED);

            assertThat(connection.closedByServer(Duration.ofSeconds(20))).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - idleFrom))
                    .isBetween(Duration.ofMillis(4_500), Duration.ofSeconds(12));
        }
    }
}
