package dev.ebb.operator.sim;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ebb.operator.api.Argv;
import dev.ebb.operator.api.EngineRelease;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.FollowerGauges;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * What an SGLang node of rank 1 or more serves on its serving port while its schedulers run: a fixed /health and,
 * with --enable-metrics, a /metrics page with the gauges of its own schedulers (python/sglang/srt/utils/common.py,
 * launch_dummy_health_check_server, at v0.5.4 and v0.5.23). In the test world its schedulers are the data-parallel
 * groups its leader's fake engine places on it ({@link FakeEngine#shownOnMember}). Without
 * --enable-metrics-for-all-schedulers only a group's first attention tensor-parallel rank records, and the fake takes
 * the layout where no group starts on this node: its page carries no request gauge at all.
 */
final class FollowerPage implements AutoCloseable {
    /** Closed from the kubelet's stop of the Pod and from the world's teardown, which may run at once. */
    private final List<HttpServer> servers = new CopyOnWriteArrayList<>();

    private final ExecutorService threads = Executors.newCachedThreadPool(DaemonThreads.named("follower-page"));
    private final int member;
    private final List<String> gauges;
    private final String model;
    private final Supplier<Optional<FakeEngine>> leader;
    private final long createdEpochSeconds = System.currentTimeMillis() / 1000;

    private FollowerPage(int member, List<String> gauges, String model, Supplier<Optional<FakeEngine>> leader) {
        this.member = member;
        this.gauges = gauges;
        this.model = model;
        this.leader = leader;
    }

    /** The page a follower's command line starts, if it is an SGLang node whose schedulers count requests of their own. */
    static Optional<FollowerPage> start(
            String image,
            List<String> command,
            String address,
            int port,
            String model,
            Supplier<Optional<FakeEngine>> leader)
            throws IOException {
        Optional<Integer> rank = valueAfter(command, "--node-rank").flatMap(FollowerPage::number);
        Optional<Integer> nodes = valueAfter(command, "--nnodes").flatMap(FollowerPage::number);
        if (!command.contains("sglang.launch_server")
                || !command.contains("--enable-metrics")
                || rank.filter(r -> r > 0).isEmpty()
                || nodes.isEmpty()
                || FollowerGauges.onFollowers(Engine.SGLANG, nodes.get(), command)
                        .isEmpty()) {
            return Optional.empty();
        }
        List<String> gauges = command.contains(FollowerGauges.ALL_SCHEDULERS)
                ? MetricsPage.gaugesOf(Engine.SGLANG, EngineRelease.of(image))
                : List.of();
        FollowerPage page = new FollowerPage(rank.get(), gauges, model, leader);
        try {
            for (String on : new LinkedHashSet<>(List.of(address, LoopbackAddresses.loopbackOf(address)))) {
                HttpServer server = HttpServer.create(new InetSocketAddress(on, port), 64);
                server.setExecutor(page.threads);
                server.createContext("/health", page::health);
                server.createContext("/metrics", page::metrics);
                server.start();
                page.servers.add(server);
            }
        } catch (IOException e) {
            page.close();
            throw e;
        }
        return Optional.of(page);
    }

    private void health(HttpExchange exchange) throws IOException {
        exchange.sendResponseHeaders(200, -1);
        exchange.close();
    }

    private void metrics(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readAllBytes();
        Set<Long> held =
                leader.get().map(engine -> engine.shownOnMember(member)).orElse(Set.of());
        byte[] page = MetricsPage.render(
                        Engine.SGLANG,
                        gauges,
                        model,
                        held,
                        MetricsPage.RequestTotals.NONE,
                        createdEpochSeconds,
                        null,
                        0)
                .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(page);
        }
    }

    private static Optional<String> valueAfter(List<String> argv, String flag) {
        for (int i = 0; i < argv.size(); i++) {
            if (Argv.flagOf(argv.get(i)).equals(flag)) {
                return Optional.of(Argv.valueAt(argv, i));
            }
        }
        return Optional.empty();
    }

    private static Optional<Integer> number(String value) {
        return value.matches("\\d{1,6}") ? Optional.of(Integer.parseInt(value)) : Optional.empty();
    }

    @Override
    public synchronized void close() {
        servers.forEach(server -> server.stop(0));
        servers.clear();
        threads.shutdownNow();
    }
}
