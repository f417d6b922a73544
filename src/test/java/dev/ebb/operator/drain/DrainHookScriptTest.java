package dev.ebb.operator.drain;

import static dev.ebb.operator.drain.HookFixtures.ADDRESSES;
import static dev.ebb.operator.drain.HookFixtures.PORT;
import static dev.ebb.operator.drain.HookFixtures.drain;
import static dev.ebb.operator.drain.HookFixtures.drainAsync;
import static dev.ebb.operator.drain.HookFixtures.hold;
import static dev.ebb.operator.drain.HookFixtures.hook;
import static dev.ebb.operator.drain.HookFixtures.withOption;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.sim.CannedListener;
import dev.ebb.operator.sim.EngineBehaviour;
import dev.ebb.operator.sim.EngineFaults;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LocalProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The real hook script under python3 against fake engines, where what it reads is the point. Each test takes as
 * long as the drain it describes, so they run concurrently; the timing tests are in {@link DrainHookTimingTest}.
 */
@Execution(ExecutionMode.CONCURRENT)
class DrainHookScriptTest {
    /**
     * More reads than the two idle ones that would end a hook early. How many fit before the last start (6 of them, at
     * 5 s to 10 s, with a grace of 15 s) depends on the machine: a loaded 2-core run fitted 4.
     */
    private static final int KEPT_READING = 3;

    @BeforeAll
    static void warmUp() throws Exception {
        HookFixtures.warmUp();
    }

    @Test
    void bodyThatIsNotMetricsCountsBusy() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            engine.faults().notMetrics(true);
            HookRun run = drain(engine, 15);

            assertThat(run.readStarts()).hasSizeGreaterThanOrEqualTo(KEPT_READING);
            assertThat(run.lines()).filteredOn(l -> l.startsWith("t=")).allMatch(l -> l.contains("busy ("));
            assertThat(run.last()).contains("no read may start");
        }
    }

    @Test
    void aLineThatIsNeitherCommentNorSampleCountsBusyWhateverMetricItNames() throws Exception {
        String address = ADDRESSES.next();
        String page = "vllm:num_requests_running{engine=\"0\"} 0.0\nvllm:num_requests_waiting{engine=\"0\"} 0.0\n"
                + "vllm:num_requests_runn ing{engine=\"1\"} 3.0\n";
        try (CannedListener engine = new CannedListener(address, PORT, "HTTP/1.0 200 OK\r\n\r\n" + page)) {
            HookRun run = HookRun.run(hook(Engine.VLLM, 15, "http"), address);

            assertThat(run.readStarts()).hasSizeGreaterThanOrEqualTo(KEPT_READING);
            assertThat(run.lines())
                    .filteredOn(l -> l.startsWith("t="))
                    .allMatch(l -> l.endsWith("busy (line 3 is neither a comment nor a sample)"));
        }
    }

    @Test
    void missingGaugeCountsBusy() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            engine.faults().missingGauge("sglang:num_decode_transfer_queue_reqs");
            HookRun run = drain(engine, 15);

            assertThat(run.lines())
                    .filteredOn(l -> l.startsWith("t="))
                    .allMatch(l -> l.contains("busy (gauge sglang:num_decode_transfer_queue_reqs missing)"));
        }
    }

    /** The default SGLang image until v0.5.12 names the prefill bootstrap queue otherwise; the hook knows both names. */
    @Test
    void anSglangReleaseFromBeforeTheQueueRenameIsReadUnderTheOldName() throws Exception {
        EngineBehaviour v054 = EngineBehaviour.ofContainer(
                Engine.SGLANG, "lmsysorg/sglang:v0.5.4", List.of("python3", "-m", "sglang.launch_server"));
        try (FakeEngine engine =
                FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m", new EngineFaults(), v054, null)) {
            HookRun run = drain(engine, 15);

            assertThat(run.last()).contains("idle on two consecutive reads");
        }
    }

    /**
     * A member of a replica whose followers count requests of their own reads every member: its own engine idle
     * proves nothing while a peer's gauges show work, and it returns on two reads that find every member idle.
     */
    @Test
    void aHookGivenSeveralHostsWaitsUntilEveryOneOfThemReadsIdle() throws Exception {
        try (FakeEngine own = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m");
                FakeEngine peer = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            hold(peer, 3, 9);
            HookRun run =
                    HookRun.run(hook(Engine.SGLANG, 30, "http", List.of(EnginePod.LOOPBACK, peer.host())), own.host());

            assertThat(run.lines()).anyMatch(l -> l.contains("busy (sum 3)"));
            assertThat(run.last()).contains("idle on two consecutive reads");
            assertThat(run.returnedAt()).isGreaterThan(9);
            assertThat(peer.inFlight()).isZero();
        }
    }

    @Test
    void aHookGivenSeveralHostsEndsWhenOneMembersEngineIsGone() throws Exception {
        try (FakeEngine own = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            hold(own, 1, 20);
            String nothingListens = ADDRESSES.next();
            HookRun run = HookRun.run(
                    hook(Engine.SGLANG, 30, "http", List.of(EnginePod.LOOPBACK, nothingListens)), own.host());

            assertThat(run.last()).contains("nothing to measure: " + nothingListens + ": connection refused");
            assertThat(run.returnedAt()).isLessThan(8);
        }
    }

    @Test
    void moreHostsThanAReplicaCouldHaveAreBadArguments() throws Exception {
        try (FakeEngine own = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            List<String> hosts = new ArrayList<>();
            for (int i = 0; i < 65; i++) {
                hosts.add("10.0.0." + i);
            }
            HookRun run = HookRun.run(hook(Engine.SGLANG, 30, "http", hosts), own.host());

            assertThat(run.last()).contains("bad arguments, nothing measured: more than 64 --host");
            assertThat(run.exitCode()).isZero();
        }
    }

    @Test
    void everySeriesOfEveryGaugeIsSummed() throws Exception {
        try (FakeEngine vllm = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m");
                FakeEngine sglang = FakeEngine.start(Engine.SGLANG, ADDRESSES.next(), PORT, "m")) {
            hold(vllm, 11, 20);
            hold(sglang, 11, 20);
            CompletableFuture<HookRun> v = drainAsync(hook(Engine.VLLM, 15, "http"), vllm.host());
            HookRun s = drain(sglang, 15);

            assertThat(v.get().lines()).anyMatch(l -> l.contains("busy (sum 11)"));
            assertThat(s.lines()).anyMatch(l -> l.contains("busy (sum 11)"));
        }
    }

    @Test
    void proxyVariablesInTheEnvironmentDoNotTakeTheReadsAwayFromTheEngine() throws Exception {
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            hold(engine, 3, 7);
            HookRun run = HookRun.run(hook(Engine.VLLM, 30, "http"), engine.host(), HookFixtures.PROXIES);

            assertThat(run.lines())
                    .as(String.join(" / ", run.lines()))
                    .first()
                    .asString()
                    .endsWith(" read: busy (sum 3)");
            assertThat(run.last()).contains("idle on two consecutive reads");
        }
    }

    @Test
    void badArgumentsStillExitZero() throws Exception {
        HookRun run = HookRun.run(List.of("python3", "-c", DrainHook.SCRIPT, "--port", "not-a-port"), "127.0.0.1");

        assertThat(run.exitCode()).isZero();
        assertThat(run.last()).contains("bad arguments");
        assertThat(run.returnedAt()).isBetween(DrainTimelines.SETTLE - 0.1, DrainTimelines.SETTLE + 1.0);
    }

    @Test
    void answerThatIsNotHttpCountsBusy() throws Exception {
        String address = ADDRESSES.next();
        try (CannedListener ssh = new CannedListener(address, PORT, "SSH-2.0-OpenSSH_9.6\r\n")) {
            HookRun run = HookRun.run(hook(Engine.VLLM, 15, "http"), address);

            assertThat(run.exitCode()).isZero();
            assertThat(run.readStarts()).hasSizeGreaterThanOrEqualTo(KEPT_READING);
            assertThat(run.lines())
                    .filteredOn(l -> l.startsWith("t="))
                    .allMatch(l -> l.contains("busy (not an HTTP answer"));
            assertThat(run.last()).contains("no read may start");
        }
    }

    static Stream<Arguments> badArguments() {
        return Stream.of(
                Arguments.of("--grace", "nan"),
                Arguments.of("--grace", "inf"),
                Arguments.of("--grace", "0"),
                Arguments.of("--grace", "-30"),
                Arguments.of("--port", "-1"),
                Arguments.of("--port", "0"),
                Arguments.of("--port", "70000"),
                Arguments.of("--port", "8000x"),
                Arguments.of("--path", "metrics"),
                Arguments.of("--path", "/met rics"),
                Arguments.of("--interval", "0"),
                Arguments.of("--interval", "nan"),
                Arguments.of("--read-timeout", "-1"),
                Arguments.of("--read-timeout", "0"),
                Arguments.of("--settle", "-5"),
                Arguments.of("--settle", "inf"),
                Arguments.of("--last-read-margin", "nan"),
                Arguments.of("--gauges", ""),
                Arguments.of("--gauges", ","),
                Arguments.of("--gauges", "vllm:num_requests_running,"),
                Arguments.of("--gauges", "vllm:num_requests_running vllm:num_requests_waiting"),
                Arguments.of("--gauges", "vllm:num_requests_running{engine=\"0\"}"),
                Arguments.of("--gauges", "vllm:num_requests_running,,vllm:num_requests_waiting"),
                Arguments.of("--gauges", "1vllm:num_requests_running"),
                Arguments.of("--gauges", "vllm:num_requests_running|"),
                Arguments.of("--gauges", "|vllm:num_requests_running"),
                Arguments.of("--gauges", "vllm:num_requests_running||vllm:num_requests_waiting"));
    }

    @ParameterizedTest(name = "{0} \"{1}\"")
    @MethodSource("badArguments")
    void badArgumentsEndTheHookAfterTheGivenSettleWithoutReadingTheEngine(String option, String value)
            throws Exception {
        // a settle of 1 s keeps the many cases short; a bad settle itself falls back to the default 5 s
        List<String> argv = withOption(withOption(hook(Engine.VLLM, 30, "http"), "--settle", "1"), option, value);
        double settle = option.equals("--settle") ? DrainTimelines.SETTLE : 1.0;
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            HookRun run = HookRun.run(argv, engine.host());

            assertThat(run.exitCode()).isZero();
            assertThat(run.lines())
                    .as(String.join(" / ", run.lines()))
                    .singleElement()
                    .satisfies(l -> assertThat(l)
                            .contains("bad arguments, nothing measured: argument " + option)
                            .doesNotContain("idle"));
            // the log's clock has a resolution of 0.1 s; the upper bound is the machine's lateness in waking
            assertThat(run.returnedAt()).isBetween(settle - 0.1, settle + 1.0);
            assertThat(engine.metricsReads()).isZero();
        }
    }

    @Test
    void badArgumentsGivenAsOptionEqualsValueStillWaitTheirSettle() throws Exception {
        List<String> argv = new ArrayList<>(withOption(hook(Engine.VLLM, 30, "http"), "--port", "80000"));
        int settle = argv.indexOf("--settle");
        argv.remove(settle + 1);
        argv.set(settle, "--settle=2");

        HookRun run = HookRun.run(argv, "127.0.0.1");

        assertThat(run.last()).contains("bad arguments, nothing measured: argument --port");
        assertThat(run.returnedAt()).isBetween(2.0 - 0.1, 2.0 + 1.0);
    }

    @Test
    void pythonWithoutTlsSupportStillDrainsAPlainHttpEngineAndEndsOverHttps(@TempDir Path modules) throws Exception {
        Files.writeString(
                modules.resolve("ssl.py"), "raise ImportError('this interpreter was built without OpenSSL')\n");
        try (FakeEngine engine = FakeEngine.start(Engine.VLLM, ADDRESSES.next(), PORT, "m")) {
            Map<String, String> withoutSsl = Map.of("PYTHONPATH", modules.toString());
            CompletableFuture<HookRun> overTls = drainAsync(hook(Engine.VLLM, 30, "https"), engine.host(), withoutSsl);
            HookRun run = HookRun.run(hook(Engine.VLLM, 30, "http"), engine.host(), withoutSsl);

            assertThat(run.exitCode()).isZero();
            assertThat(run.last()).contains("idle on two consecutive reads");
            assertThat(overTls.get().exitCode()).isZero();
            assertThat(overTls.get().last()).contains("nothing to measure: this python3 has no TLS support");
        }
    }

    /**
     * A follower's hook reads its leader by name. The resolver is replaced (sitecustomize, which python3 imports at its
     * start) so that the answers do not depend on this machine's DNS: "no such name" ends the hook, since the name goes
     * with the leader's Pod; a temporary failure proves nothing and counts as busy until the last read.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("resolverAnswers")
    void aLeaderNameTheResolverDoesNotKnowEndsTheHookAndATemporaryFailureHoldsIt(
            String errno, String ending, @TempDir Path modules) throws Exception {
        Files.writeString(
                modules.resolve("sitecustomize.py"),
                "import socket\n"
                        + "def refuse(*args, **kwargs):\n"
                        + "    raise socket.gaierror(socket." + errno + ", 'resolver answer')\n"
                        + "socket.getaddrinfo = refuse\n");
        List<String> argv = withOption(
                withOption(hook(Engine.VLLM, 12, "http"), "--settle", "1"), "--host", "qwen-big-r0-m0.qwen-big-r0");

        HookRun run = HookRun.run(argv, "127.0.0.1", Map.of("PYTHONPATH", modules.toString()));

        assertThat(run.exitCode()).isZero();
        assertThat(run.last()).contains(ending);
    }

    static Stream<Arguments> resolverAnswers() {
        return Stream.of(
                Arguments.of("EAI_NONAME", "nothing to measure: qwen-big-r0-m0.qwen-big-r0 does not resolve"),
                Arguments.of("EAI_AGAIN", "no read may start"));
    }

    @Test
    void pythonMissingAModuleTheHookNeedsStillExitsZero(@TempDir Path modules) throws Exception {
        Files.writeString(modules.resolve("argparse.py"), "raise ImportError('no argparse here')\n");
        HookRun run = HookRun.run(hook(Engine.VLLM, 30, "http"), "127.0.0.1", Map.of("PYTHONPATH", modules.toString()));

        assertThat(run.exitCode()).isZero();
        assertThat(run.last()).contains("stopped by ImportError: no argparse here");
    }

    @Test
    void scriptDefaultsAreTheCalculatorsNumbers() throws Exception {
        Process help = LocalProcesses.builder(List.of("python3", "-c", DrainHook.SCRIPT, "--help"))
                .start();
        String text = new String(help.getInputStream().readAllBytes()).replaceAll("\\s+", " ");
        help.waitFor();

        assertThat(text)
                .contains("(default: " + DrainTimelines.SETTLE + ".0)")
                .contains("between read starts (default: " + DrainTimelines.INTERVAL + ".0)")
                .contains("is busy (default: " + DrainTimelines.READ_TIMEOUT + ".0)")
                .contains("minus this (default: " + DrainTimelines.LAST_READ_MARGIN + ".0)");
    }
}
