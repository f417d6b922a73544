package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.observe.Metrics;
import dev.ebb.operator.sim.EngineFaults;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.RouteTarget;
import dev.ebb.operator.sim.SelfSignedTls;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The real read script under python3, run through the test world's exec against fake engines. One test at a
 * time, and no other test class beside it: every read is a python3 process on this machine's two cores, and the
 * bounds are what is tested.
 */
@Isolated
class MemberReaderTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    private final LocalExec exec = new LocalExec();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MemberReader reader = new MemberReader(exec, registry);
    private final List<FakeEngine> engines = new ArrayList<>();

    @AfterEach
    void stop() {
        engines.forEach(FakeEngine::close);
        exec.close();
    }

    private FakeEngine engine(Engine kind) throws Exception {
        FakeEngine engine = FakeEngine.start(kind, ADDRESSES.next(), 8000, "m");
        engines.add(engine);
        return engine;
    }

    private static Pod member(String address, Map<String, String> annotations) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("m-" + address)
                .withNamespace("ns")
                .withAnnotations(annotations)
                .endMetadata()
                .withNewStatus()
                .withPodIP(address)
                .endStatus()
                .build();
    }

    private static Pod member(FakeEngine engine) {
        return member(
                engine.host(),
                Map.of(
                        Annotations.SCRAPE_PORT,
                        "8000",
                        Annotations.SCRAPE_PATH,
                        "/metrics",
                        Annotations.SCRAPE_SCHEME,
                        "http"));
    }

    private Reading read(Pod pod, Engine kind) {
        return reader.read(pod, kind).await().atMost(Duration.ofSeconds(10));
    }

    @Test
    void idleEngineReadsIdle() throws Exception {
        FakeEngine engine = engine(Engine.SGLANG);

        assertThat(read(member(engine), Engine.SGLANG)).isEqualTo(new Reading.Idle());
        assertThat(registry.counter(Metrics.MEMBER_READS, Metrics.VERDICT, "idle")
                        .count())
                .isEqualTo(1);
        assertThat(registry.timer(Metrics.MEMBER_READ_DURATION).count()).isEqualTo(1);
    }

    @Test
    void busyEngineReadsItsRequestsSummedOverEverySeries() throws Exception {
        FakeEngine engine = engine(Engine.VLLM);
        // streams of 20 s: on a loaded machine the six may take seconds to start, and none may end before the read
        LoadGenerator load = new LoadGenerator(
                () -> Optional.of(new RouteTarget("p", engine.uri(""))), 1, 200, Duration.ofMillis(100));
        for (int i = 0; i < 6; i++) {
            CompletableFuture.runAsync(load::send);
        }
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(3)).until(() -> engine.inFlight() == 6);

        assertThat(read(member(engine), Engine.VLLM)).isEqualTo(new Reading.Busy(6));
        assertThat(registry.counter(Metrics.MEMBER_READS, Metrics.VERDICT, "busy")
                        .count())
                .isEqualTo(1);
    }

    @Test
    void engineFaultsBecomeFailedOrPartialReadings() throws Exception {
        FakeEngine engine = engine(Engine.VLLM);
        Pod pod = member(engine);

        engine.faults().missingGauge("vllm:num_requests_waiting");
        assertThat(read(pod, Engine.VLLM)).isEqualTo(new Reading.Partial(List.of("vllm:num_requests_waiting")));
        engine.faults().missingGauge(null).notMetrics(true);
        assertThat(read(pod, Engine.VLLM)).isEqualTo(new Reading.Failed("line 1 is neither a comment nor a sample"));
        engine.faults().notMetrics(false).metricsStatus(500);
        assertThat(read(pod, Engine.VLLM)).isEqualTo(new Reading.Failed("the engine answered an HTTP error"));
        engine.faults().metricsStatus(200).oversizedMetrics(2 * 1024 * 1024);
        assertThat(read(pod, Engine.VLLM))
                .isEqualTo(new Reading.Failed("the engine's metrics page is over the size cap"));
        engine.faults().oversizedMetrics(0).slowMetrics(Duration.ofSeconds(4));
        long start = System.nanoTime();
        assertThat(read(pod, Engine.VLLM)).isEqualTo(new Reading.Failed("the engine did not answer within 2 s"));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(4000));
        assertThat(registry.counter(Metrics.MEMBER_READS, Metrics.VERDICT, "failed")
                        .count())
                .isEqualTo(4);
        assertThat(registry.counter(Metrics.MEMBER_READS, Metrics.VERDICT, "partial")
                        .count())
                .isEqualTo(1);
    }

    @Test
    void tlsEngineIsReadOverHttpsAndPlainHttpIsAFailedHandshake() throws Exception {
        FakeEngine tls = FakeEngine.start(
                Engine.VLLM, ADDRESSES.next(), 8443, "m", new EngineFaults(), SelfSignedTls.serverContext());
        engines.add(tls);
        FakeEngine plain = engine(Engine.VLLM);
        Map<String, String> https = Map.of(Annotations.SCRAPE_PORT, "8443", Annotations.SCRAPE_SCHEME, "https");

        assertThat(read(member(tls.host(), https), Engine.VLLM)).isEqualTo(new Reading.Idle());
        // a web server answers a TLS hello with a plain-text error (a failed handshake); the JDK's test server with
        // silence
        assertThat(read(
                        member(
                                plain.host(),
                                Map.of(Annotations.SCRAPE_PORT, "8000", Annotations.SCRAPE_SCHEME, "https")),
                        Engine.VLLM))
                .isIn(
                        new Reading.Failed("the TLS handshake with the engine failed"),
                        new Reading.Failed("the engine did not answer within 2 s"));
    }

    @Test
    void refusedConnectionAndExecFaults() {
        Pod nobodyListens = member(
                member(ADDRESSES.next(), Map.of()).getStatus().getPodIP(), Map.of(Annotations.SCRAPE_PORT, "8000"));

        assertThat(read(nobodyListens, Engine.VLLM)).isEqualTo(new Reading.Failed("the engine refused the connection"));
        exec.failWith("container main not found in pod x");
        assertThat(read(nobodyListens, Engine.VLLM))
                .isEqualTo(new Reading.Failed("exec failed: container main not found in pod x"));
        exec.failWith(null).extraOutput(2 * 1024 * 1024);
        assertThat(read(nobodyListens, Engine.VLLM))
                .isEqualTo(new Reading.Failed("the read printed more than 1048576 bytes"));
    }

    @Test
    void execThatHangsEndsAtTheFiveSecondBound() {
        exec.hang(true);
        long start = System.nanoTime();

        Reading reading = read(member(ADDRESSES.next(), Map.of(Annotations.SCRAPE_PORT, "8000")), Engine.VLLM);

        assertThat(reading).isEqualTo(new Reading.Failed("the read took longer than 5 s"));
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isBetween(Duration.ofMillis(4900), Duration.ofMillis(6500));
    }

    static Stream<Arguments> hostileAnnotations() {
        return Stream.of(
                Arguments.of("no port", Map.of(), "annotation prometheus.io/port is not a port number 1..65535"),
                Arguments.of(
                        "port with a shell line",
                        Map.of(Annotations.SCRAPE_PORT, "8000; rm -rf /"),
                        "prometheus.io/port"),
                Arguments.of("port 0", Map.of(Annotations.SCRAPE_PORT, "0"), "prometheus.io/port"),
                Arguments.of("port 65536", Map.of(Annotations.SCRAPE_PORT, "65536"), "prometheus.io/port"),
                Arguments.of("negative port", Map.of(Annotations.SCRAPE_PORT, "-1"), "prometheus.io/port"),
                Arguments.of("huge port", Map.of(Annotations.SCRAPE_PORT, "9".repeat(400)), "prometheus.io/port"),
                Arguments.of("port with a newline", Map.of(Annotations.SCRAPE_PORT, "80\n00"), "prometheus.io/port"),
                Arguments.of(
                        "unknown scheme",
                        Map.of(Annotations.SCRAPE_PORT, "8000", Annotations.SCRAPE_SCHEME, "file"),
                        "prometheus.io/scheme"),
                Arguments.of(
                        "path with a query",
                        Map.of(Annotations.SCRAPE_PORT, "8000", Annotations.SCRAPE_PATH, "/metrics?x=$(id)"),
                        "prometheus.io/path"),
                Arguments.of(
                        "path to another host",
                        Map.of(Annotations.SCRAPE_PORT, "8000", Annotations.SCRAPE_PATH, "@evil.example/"),
                        "prometheus.io/path"),
                Arguments.of(
                        "oversized path",
                        Map.of(Annotations.SCRAPE_PORT, "8000", Annotations.SCRAPE_PATH, "/" + "a".repeat(300)),
                        "prometheus.io/path"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileAnnotations")
    void memberWithUnusableAnnotationsIsNotExecutedAtAll(String title, Map<String, String> annotations, String named) {
        AtomicInteger execs = new AtomicInteger();
        MemberReader counting = new MemberReader(
                (pod, container, argv, limits) -> {
                    execs.incrementAndGet();
                    return Uni.createFrom().item(new ExecResult.Failed("should not run"));
                },
                registry);

        Reading reading = counting.read(member("127.0.0.1", annotations), Engine.VLLM)
                .await()
                .indefinitely();

        assertThat(reading)
                .isInstanceOfSatisfying(
                        Reading.Failed.class, f -> assertThat(f.why()).contains(named));
        assertThat(execs).hasValue(0);
    }

    @Test
    void readIsCountedWhenSubscribedNotWhenBuilt() {
        AtomicInteger execs = new AtomicInteger();
        MemberReader counting = new MemberReader(
                (pod, container, argv, limits) -> {
                    execs.incrementAndGet();
                    return Uni.createFrom().item(new ExecResult.Exited(0, new byte[0]));
                },
                registry);
        Pod refused = member("127.0.0.1", Map.of());
        Pod readable = member("127.0.0.1", Map.of(Annotations.SCRAPE_PORT, "8000"));

        Uni<Reading> refusedRead = counting.read(refused, Engine.VLLM);
        Uni<Reading> plainRead = counting.read(readable, Engine.VLLM);

        assertThat(registry.find(Metrics.MEMBER_READS).counters()).allMatch(c -> c.count() == 0);
        assertThat(registry.timer(Metrics.MEMBER_READ_DURATION).count()).isZero();
        assertThat(execs).hasValue(0);

        refusedRead.await().indefinitely();
        refusedRead.await().indefinitely();
        plainRead.await().indefinitely();

        assertThat(registry.counter(Metrics.MEMBER_READS, Metrics.VERDICT, "failed")
                        .count())
                .isEqualTo(3);
        assertThat(registry.timer(Metrics.MEMBER_READ_DURATION).count()).isEqualTo(3);
        assertThat(execs).hasValue(1);
    }

    @Test
    void fiftyConcurrentReadsAllFinishWithinTheBound() throws Exception {
        List<Pod> members = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            members.add(member(engine(Engine.VLLM)));
        }
        long start = System.nanoTime();

        List<Reading> readings = reader.readAll(members, Engine.VLLM).await().atMost(Duration.ofSeconds(20));
        Duration all = Duration.ofNanos(System.nanoTime() - start);

        System.out.printf(
                "50 concurrent member reads: all done in %d ms, slowest read %.0f ms, mean %.0f ms%n",
                all.toMillis(),
                registry.timer(Metrics.MEMBER_READ_DURATION).max(TimeUnit.MILLISECONDS),
                registry.timer(Metrics.MEMBER_READ_DURATION).mean(TimeUnit.MILLISECONDS));
        // on two cores, fifty interpreters starting at once may starve one past the engine's 2 s: still a bounded read
        assertThat(readings)
                .hasSize(50)
                .allMatch(r -> r.equals(new Reading.Idle())
                        || r.equals(new Reading.Failed("the engine did not answer within 2 s")));
        assertThat(readings.stream().filter(r -> r.equals(new Reading.Idle()))).hasSizeGreaterThanOrEqualTo(45);
        assertThat(all).isLessThan(ExecLimits.MEMBER_READ.deadline());
    }

    /** A generation between two reads leaves the gauges idle at both, and moves the request counters read beside them. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aGenerationBetweenTwoReadsMovesTheRequestCountersReadWithTheTable(Engine kind) throws Exception {
        FakeEngine engine = engine(kind);
        MemberWork before =
                reader.readWork(member(engine), kind, Optional.of(8000)).await().atMost(Duration.ofSeconds(10));
        LoadGenerator.Request generation = new LoadGenerator(
                        () -> Optional.of(new RouteTarget("p", engine.uri(""))), 1, 3, Duration.ofMillis(10))
                .send();
        MemberWork after =
                reader.readWork(member(engine), kind, Optional.of(8000)).await().atMost(Duration.ofSeconds(10));
        MemberWork gaugesOnly =
                reader.readWork(member(engine), kind, Optional.empty()).await().atMost(Duration.ofSeconds(10));

        assertThat(generation.outcome()).isEqualTo(LoadGenerator.Outcome.COMPLETED);
        assertThat(List.of(before.gauges(), after.gauges())).containsOnly(new Reading.Idle());
        assertThat(before.requests()).isPresent();
        assertThat(after.requests())
                .isPresent()
                .get()
                .isNotEqualTo(before.requests().get());
        assertThat(gaugesOnly.requests()).as("asked for only with the table").isEmpty();
    }

    @Test
    void withAConnectionPortTheGaugesAndTheConnectionTableAreReadTogether() throws Exception {
        FakeEngine engine = engine(Engine.VLLM);
        MemberWork alone = reader.readWork(member(engine), Engine.VLLM, Optional.of(8000))
                .await()
                .atMost(Duration.ofSeconds(10));

        String client = ADDRESSES.next();
        try (Socket connected = new Socket(engine.host(), 8000, InetAddress.getByName(client), 0)) {
            MemberWork withClient = reader.readWork(member(engine), Engine.VLLM, Optional.of(8000))
                    .await()
                    .atMost(Duration.ofSeconds(10));

            assertThat(alone)
                    .isEqualTo(new MemberWork(
                            new Reading.Idle(),
                            Optional.of(new ConnectionRead.Peers.Connected(0, List.of())),
                            Optional.of(0.0)));
            assertThat(withClient.gauges()).isEqualTo(new Reading.Idle());
            assertThat(withClient.connections())
                    .contains(new ConnectionRead.Peers.Connected(1, List.of(client + ":" + connected.getLocalPort())));
        }
    }

    @Test
    void withoutAConnectionPortOnlyTheGaugesAreRead() throws Exception {
        FakeEngine engine = engine(Engine.VLLM);

        assertThat(reader.readWork(member(engine), Engine.VLLM, Optional.empty())
                        .await()
                        .atMost(Duration.ofSeconds(10)))
                .isEqualTo(MemberWork.gaugesOnly(new Reading.Idle()));
    }

    @Test
    void aConnectionTableThatCannotBeReadIsUnknownNeverNoPeers() throws Exception {
        FakeEngine engine = engine(Engine.VLLM);
        exec.failWith("pods/exec is forbidden");

        MemberWork work = reader.readWork(member(engine), Engine.VLLM, Optional.of(8000))
                .await()
                .atMost(Duration.ofSeconds(10));

        assertThat(work.connections())
                .hasValueSatisfying(peers -> assertThat(peers).isInstanceOf(ConnectionRead.Peers.Unknown.class));
    }
}
