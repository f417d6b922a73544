package dev.ebb.operator.drain;

import static dev.ebb.operator.drain.HookFixtures.ADDRESSES;
import static dev.ebb.operator.drain.HookFixtures.PORT;
import static dev.ebb.operator.drain.HookFixtures.drain;
import static dev.ebb.operator.drain.HookFixtures.hold;
import static dev.ebb.operator.drain.HookFixtures.hook;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.EngineFaults;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.SelfSignedTls;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real hook under python3 against fake engines, where the timing is the point: one at a time, so that no
 * other test's processes compete for the two cores. Times come from the hook's own clock (its log), with the
 * wall time of the whole process bounded too.
 */
class DrainHookTimingTest {
    /** What starting the interpreter may add to the hook's own time on a loaded two-core machine. */
    private static final double STARTUP = 1.0;

    @BeforeAll
    static void warmUp() throws Exception {
        HookFixtures.warmUp();
    }

    private static void returnedAround(HookRun run, double at, double tolerance) {
        assertThat(run.returnedAt()).as(String.join(" / ", run.lines())).isBetween(at - tolerance, at + tolerance);
        assertThat(run.seconds()).isBetween(run.returnedAt(), run.returnedAt() + STARTUP);
        assertThat(run.exitCode()).isZero();
    }

    @Test
    void idleEngineReturnsAfterSixSeconds() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            HookRun run = drain(engine, 30);

            returnedAround(run, 6.0, 0.5);
            assertThat(run.readStarts()).containsExactly(5.0, 6.0);
            assertThat(run.lines()).containsExactly(
                    "t=5.0s read: idle (sum 0), 1 in a row", "t=6.0s read: idle (sum 0), 2 in a row",
                    "returning at 6.0s: idle on two consecutive reads");
        }
    }

    @Test
    void busyForEightSecondsReturnsAboutTwoSecondsAfterItGoesIdle() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            hold(engine, 2, 8);
            HookRun run = drain(engine, 30);

            assertThat(run.lines()).anyMatch(l -> l.contains("busy (sum 2)"));
            // the two requests may end a read apart; the run of idle reads starts after the last busy one
            double lastBusy = run.lines().stream().filter(l -> l.contains("busy (sum ")).map(l -> l.substring(2, l.indexOf('s')))
                    .mapToDouble(Double::parseDouble).max().orElseThrow();
            assertThat(lastBusy).isBetween(6.0, 8.0);
            assertThat(run.returnedAt() - lastBusy).as(String.join(" / ", run.lines())).isBetween(1.9, 2.3);
            assertThat(run.last()).contains("idle on two consecutive reads");
        }
    }

    @Test
    void alwaysBusyWithGrace15StartsNoReadAfterTenSeconds() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            hold(engine, 1, 30);
            HookRun run = drain(engine, 15);

            assertThat(run.readStarts()).hasSizeGreaterThanOrEqualTo(5).allSatisfy(t -> assertThat(t).isBetween(5.0, 10.0));
            returnedAround(run, 10.5, 0.5);
            assertThat(run.last()).contains("no read may start after 10s");
        }
    }

    @Test
    void refusedConnectionEndsTheHookRightAfterTheSettle() throws Exception {
        HookRun run = HookRun.run(hook(Engine.VLLM, 30, "http"), ADDRESSES.next());

        returnedAround(run, 5.2, 0.2);
        assertThat(run.last()).contains("connection refused");
    }

    @Test
    void httpErrorEndsTheHookRightAfterTheFirstRead() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            engine.faults().metricsStatus(500);
            HookRun run = drain(engine, 30);

            returnedAround(run, 5.2, 0.2);
            assertThat(run.readStarts()).containsExactly(5.0);
            assertThat(run.last()).contains("HTTP 500");
        }
    }

    @Test
    void readThatHangsCountsBusyAndIsCutAtTwoSeconds() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            engine.faults().slowMetrics(Duration.ofSeconds(20));
            HookRun run = drain(engine, 15);

            assertThat(run.lines()).filteredOn(l -> l.startsWith("t=")).hasSize(3).allMatch(l -> l.contains("busy (no answer within 2s)"));
            assertThat(run.readStarts()).containsExactly(5.0, 7.0, 9.0);
            returnedAround(run, 11.0, 0.3);
        }
    }

    @Test
    void tlsEngineIsReadOverHttpsAndAFailedHandshakeEndsTheHook() throws Exception {
        String plainAddress = ADDRESSES.next();
        try (FakeEngine tls = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m", new EngineFaults(), SelfSignedTls.serverContext());
                PlainTextListener plain = new PlainTextListener(plainAddress, PORT)) {
            HookRun overTls = HookRun.run(hook(Engine.VLLM, 30, "https"), tls.host());
            HookRun handshakeFails = HookRun.run(hook(Engine.VLLM, 30, "https"), plainAddress);

            returnedAround(overTls, 6.0, 0.5);
            assertThat(overTls.last()).contains("idle on two consecutive reads");
            returnedAround(handshakeFails, 5.2, 0.2);
            assertThat(handshakeFails.last()).contains("TLS handshake failed");
        }
    }

    /** A listener that answers anything, a TLS hello included, with a plain-text HTTP error, as web servers do. */
    private static final class PlainTextListener implements AutoCloseable {
        private final ServerSocket socket;

        PlainTextListener(String address, int port) throws IOException {
            socket = new ServerSocket(port, 8, InetAddress.getByName(address));
            Thread accept = new Thread(() -> {
                while (!socket.isClosed()) {
                    try (Socket client = socket.accept()) {
                        client.getInputStream().read(new byte[512]);
                        client.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    } catch (IOException e) {
                        // closed
                    }
                }
            }, "plain-text-listener");
            accept.setDaemon(true);
            accept.start();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
