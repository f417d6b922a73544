package dev.ebb.operator.bench;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.drain.HookFixtures;
import dev.ebb.operator.drain.HookRun;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.LoopbackAddresses;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code make bench}: measures what the README quotes and prints it. Not a test: nothing here passes or fails,
 * the numbers are the output.
 */
public final class Benchmarks {
    private static final int IDLE_HOOK_RUNS = 20;
    private static final int IDLE_HOOK_AT_ONCE = 4;

    private Benchmarks() {
    }

    public static void main(String[] args) throws Exception {
        System.out.printf(Locale.ROOT, "Ebb benchmarks on %d cores, Java %s%n%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        idleHookReturn();
        memberReads();
        System.exit(0);
    }

    /** The drain hook of an idle engine, as the kubelet would run it, against its floor of settle + one interval. */
    private static void idleHookReturn() throws Exception {
        HookFixtures.warmUp();
        LoopbackAddresses addresses = new LoopbackAddresses();
        List<Double> ownClock = new ArrayList<>();
        List<Double> wall = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(IDLE_HOOK_AT_ONCE);
        for (int batch = 0; batch < IDLE_HOOK_RUNS / IDLE_HOOK_AT_ONCE; batch++) {
            List<FakeEngine> engines = new ArrayList<>();
            List<Future<HookRun>> runs = new ArrayList<>();
            for (int i = 0; i < IDLE_HOOK_AT_ONCE; i++) {
                FakeEngine engine = FakeEngine.start(i % 2 == 0 ? Engine.VLLM : Engine.SGLANG, addresses.next(), 8000, "m");
                engines.add(engine);
                runs.add(pool.submit(() -> HookRun.run(HookFixtures.hook(engine.engine(), 30, "http"), engine.host())));
            }
            for (Future<HookRun> run : runs) {
                ownClock.add(run.get().returnedAt());
                wall.add(run.get().seconds());
            }
            engines.forEach(FakeEngine::close);
        }
        pool.shutdown();
        double floor = DrainTimelines.SETTLE + DrainTimelines.INTERVAL;
        System.out.printf(Locale.ROOT, "Idle drain hook return, %d runs (%d at a time), floor %.1f s (settle %d s + one read interval)%n",
                IDLE_HOOK_RUNS, IDLE_HOOK_AT_ONCE, floor, DrainTimelines.SETTLE);
        System.out.printf(Locale.ROOT, "  %-34s %8s %8s %8s%n", "", "min", "median", "max");
        row("hook's own clock (s)", ownClock);
        row("process start to exit (s)", wall);
        System.out.println();
    }

    /** Member reads through the test world's exec (a local python3 per read): one at a time, then fifty at once. */
    private static void memberReads() throws Exception {
        LoopbackAddresses addresses = new LoopbackAddresses();
        List<FakeEngine> engines = new ArrayList<>();
        List<Pod> members = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            FakeEngine engine = FakeEngine.start(Engine.VLLM, addresses.next(), 8000, "m");
            engines.add(engine);
            members.add(new PodBuilder().withNewMetadata().withName("m" + i).withNamespace("bench")
                    .addToAnnotations(Annotations.SCRAPE_PORT, "8000").endMetadata()
                    .withNewStatus().withPodIP(engine.host()).endStatus().build());
        }
        try (LocalExec exec = new LocalExec()) {
            MemberReader reader = new MemberReader(exec, new SimpleMeterRegistry());
            List<Double> one = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                long start = System.nanoTime();
                reader.read(members.get(i), Engine.VLLM).await().indefinitely();
                one.add((System.nanoTime() - start) / 1e6);
            }
            List<Double> fifty = new ArrayList<>();
            for (int round = 0; round < 3; round++) {
                long start = System.nanoTime();
                reader.readAll(members, Engine.VLLM).await().indefinitely();
                fifty.add((System.nanoTime() - start) / 1e6);
            }
            System.out.println("Member reads through the local exec (real read script, python3 per read), bound 5000 ms");
            System.out.printf(Locale.ROOT, "  %-34s %8s %8s %8s%n", "", "min", "median", "max");
            row("one read at a time, 20 (ms)", one);
            row("50 at once, all done, 3 rounds (ms)", fifty);
            System.out.println();
        } finally {
            engines.forEach(FakeEngine::close);
        }
    }

    private static void row(String label, List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        double median = sorted.size() % 2 == 1 ? sorted.get(sorted.size() / 2)
                : (sorted.get(sorted.size() / 2 - 1) + sorted.get(sorted.size() / 2)) / 2;
        System.out.printf(Locale.ROOT, "  %-34s %8.2f %8.2f %8.2f%n", label, sorted.get(0), median, sorted.get(sorted.size() - 1));
    }
}
