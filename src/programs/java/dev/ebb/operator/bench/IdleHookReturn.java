package dev.ebb.operator.bench;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.drain.HookFixtures;
import dev.ebb.operator.drain.HookRun;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LoopbackAddresses;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The drain hook of an idle engine, as the kubelet would run it, against its floor: the settle and one read
 * interval, {@link DrainTimelines#IDLE_RETURN} s, which no idle hook can beat.
 */
public final class IdleHookReturn {
    private static final int RUNS = 20;
    private static final int AT_ONCE = 4;
    private static final int GRACE = RoleSpec.DEFAULT_GRACE_SECONDS;

    /**
     * @param ownClock when each hook returned by its own clock, from the interpreter's start
     * @param wall each hook process, start to exit
     */
    public record Figures(List<Double> ownClock, List<Double> wall) {
        public void print() {
            System.out.printf(
                    Locale.ROOT,
                    "Idle drain hook return, %d runs (%d at a time), grace %d s, floor %d s (settle %d s + one read interval)%n",
                    RUNS,
                    AT_ONCE,
                    GRACE,
                    DrainTimelines.IDLE_RETURN,
                    DrainTimelines.SETTLE);
            Columns.headerAboveFloor();
            Columns.rowAboveFloor("hook's own clock (s)", ownClock, DrainTimelines.IDLE_RETURN);
            Columns.rowAboveFloor("process start to exit (s)", wall, DrainTimelines.IDLE_RETURN);
            System.out.println();
        }
    }

    private IdleHookReturn() {}

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(() -> measure().print());
    }

    public static Figures measure() throws Exception {
        HookFixtures.warmUp();
        LoopbackAddresses addresses = new LoopbackAddresses();
        List<Double> ownClock = new ArrayList<>();
        List<Double> wall = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(AT_ONCE);
        for (int batch = 0; batch < RUNS / AT_ONCE; batch++) {
            List<FakeEngine> engines = new ArrayList<>();
            List<Future<HookRun>> runs = new ArrayList<>();
            for (int i = 0; i < AT_ONCE; i++) {
                FakeEngine engine =
                        FakeEngine.start(i % 2 == 0 ? Engine.VLLM : Engine.SGLANG, addresses.next(), 8000, "m");
                engines.add(engine);
                runs.add(pool.submit(
                        () -> HookRun.run(HookFixtures.hook(engine.engine(), GRACE, "http"), engine.host())));
            }
            for (Future<HookRun> run : runs) {
                ownClock.add(run.get().returnedAt());
                wall.add(run.get().seconds());
            }
            engines.forEach(FakeEngine::close);
        }
        pool.shutdown();
        return new Figures(ownClock, wall);
    }
}
