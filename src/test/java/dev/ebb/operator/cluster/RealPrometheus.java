package dev.ebb.operator.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The Prometheus server Debian packages, run as a process of the test's own, scraping engine Pods at their addresses
 * as a monitoring stack with a static target list would. Observed at 2.42.0 (Debian 12): every scrape of a target
 * goes over one kept-alive HTTP/1.1 connection while the scrape interval is shorter than the engine's keep-alive.
 */
final class RealPrometheus implements AutoCloseable {
    private static final Path BINARY = Path.of("/usr/bin/prometheus");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final URI api;

    private RealPrometheus(Process process, URI api) {
        this.process = process;
        this.api = api;
    }

    /** Scrapes each {@code host:port} target's /metrics every {@code interval}; its log and storage go under {@code directory}. */
    static RealPrometheus scraping(List<String> targets, Duration interval, Path directory) throws IOException {
        if (!Files.isExecutable(BINARY)) {
            throw new IllegalStateException(
                    BINARY
                            + " is missing: the real node tier scrapes with Debian's prometheus package (apt-get install prometheus)");
        }
        Files.createDirectories(directory);
        String config = """
                global:
                  scrape_interval: %ds
                  scrape_timeout: %ds
                scrape_configs:
                  - job_name: engines
                    static_configs:
                      - targets: [%s]
                """.formatted(
                        interval.toSeconds(),
                        interval.toSeconds(),
                        targets.stream().map(t -> "\"" + t + "\"").collect(Collectors.joining(", ")));
        Path file = directory.resolve("prometheus.yml");
        Files.writeString(file, config);
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Process process = new ProcessBuilder(
                        BINARY.toString(),
                        "--config.file=" + file,
                        "--storage.tsdb.path=" + directory.resolve("data"),
                        "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true)
                .redirectOutput(directory.resolve("prometheus.log").toFile())
                .start();
        return new RealPrometheus(process, URI.create("http://127.0.0.1:" + port));
    }

    /** How many targets its last scrape found up; none while it cannot be asked. */
    int up() {
        try {
            HttpResponse<String> answer = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(api.resolve("/api/v1/query?query="
                                            + URLEncoder.encode("sum(up)", StandardCharsets.UTF_8)))
                                    .timeout(Duration.ofSeconds(2))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            JsonNode result = JSON.readTree(answer.body()).path("data").path("result");
            return result.isEmpty()
                    ? 0
                    : (int) Double.parseDouble(
                            result.get(0).path("value").get(1).asText());
        } catch (IOException | RuntimeException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    @Override
    public void close() {
        process.destroy();
    }
}
