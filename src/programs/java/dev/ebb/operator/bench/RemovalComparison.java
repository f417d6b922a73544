package dev.ebb.operator.bench;

import dev.ebb.operator.config.EbbSettings;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.sandbox.Choreography;
import dev.ebb.operator.sandbox.Choreography.ClientPath;
import dev.ebb.operator.sandbox.Removal;
import dev.ebb.operator.sandbox.Report;
import dev.ebb.operator.sandbox.Run;
import dev.ebb.operator.sandbox.Scenario;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Requests cut while replicas go away under streaming load, and how long they take to go: a 4 -> 2 scale-down with a
 * router and without one, and a rollout of 3 replicas with a router, each played with Ebb and the ways it is compared
 * with, on the same fixed set of requests.
 */
public final class RemovalComparison {
    /**
     * Runs played at once, each in its own test world. Their generations are wall-clock time and the worlds mostly
     * wait, so a few side by side cost little precision and keep {@code make bench} short; 1 plays them one by one.
     */
    private static final int AT_ONCE = Integer.getInteger("ebb-bench.parallel-runs", 4);

    private record Table(Choreography choreography, List<Removal> removals) {}

    private RemovalComparison() {}

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(RemovalComparison::run);
    }

    static void run() throws InterruptedException, ExecutionException {
        List<Removal> scaleDowns = List.of(
                Removal.EBB, Removal.EBB_ONE_AT_A_TIME, Removal.EBB_HOOK_ONLY, Removal.NAIVE, Removal.HOOK_ONLY);
        List<Table> tables = List.of(
                new Table(Choreography.scaleDownBench(ClientPath.ROUTER), scaleDowns),
                new Table(Choreography.scaleDownBench(ClientPath.SERVICE), scaleDowns),
                new Table(
                        Choreography.rolloutBench(),
                        List.of(Removal.EBB, Removal.EBB_HOOK_ONLY, Removal.NAIVE, Removal.HOOK_ONLY)));
        ExecutorService runner = Executors.newFixedThreadPool(AT_ONCE);
        try {
            List<List<Future<Run>>> played = new ArrayList<>();
            for (Table table : tables) {
                played.add(table.removals().stream()
                        .map(removal -> runner.submit(() -> Scenario.play(removal, table.choreography(), line -> {})))
                        .toList());
            }
            for (int i = 0; i < tables.size(); i++) {
                List<Run> runs = new ArrayList<>();
                for (Future<Run> run : played.get(i)) {
                    runs.add(run.get());
                }
                print(tables.get(i), runs);
            }
        } finally {
            runner.shutdownNow();
        }
    }

    private static void print(Table table, List<Run> runs) {
        Choreography c = table.choreography();
        System.out.printf(
                Locale.ROOT,
                "%s of one vLLM role, %s, grace %d s, one run each (%d at once; machine load average %.2f at the end)%n",
                c.title(),
                c.path().description(),
                c.grace(),
                AT_ONCE,
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.out.printf(
                Locale.ROOT,
                "  load: the same %s, the change %d s after the first client starts%n",
                c.load(),
                c.warmUp().toSeconds());
        table.removals()
                .forEach(r -> System.out.printf(
                        Locale.ROOT,
                        "  %-12s %s%s%n",
                        r.label(),
                        r.description(),
                        EbbSettings.known(r.operatorSettings())
                                ? ""
                                : "; this operator does not know these settings yet, so it ran as Ebb"));
        if (c.steps().stream().anyMatch(Choreography.Rollout.class::isInstance)) {
            System.out.println(
                    "  in a rollout the Pods of all but Ebb go one at a time, highest ordinal first: each deleted once every"
                            + " other Pod is Ready, and replaced once it is gone, before the next goes");
        }
        System.out.print(Report.table(runs));
        System.out.println(
                "  requests cut: streams that started and ended early; of them longer than the grace: generations"
                        + " that would have outlasted the grace from their start");
        System.out.println(
                "  never streamed: refused until the run stopped; refusals: refused before streaming and sent again");
        if (runs.stream().anyMatch(r -> r.floor().isPresent())) {
            System.out.println(
                    "  change to last leaving Pod gone: from the spec change (or the deletes) to the last of the two"
                            + " leaving Pods deleted from the API server");
            System.out.println(
                    "  floor of the Pods that left: when the last generation sent to the two Pods that did leave (those"
                            + " in flight at the change, and those sent to them after it) would end, plus the same "
                            + DrainTimelines.IDLE_RETURN
                            + " s; wall time over it is what the removal itself adds, whatever it chose");
            System.out.println(
                    "  floor: the longest generation still to stream at the change on the two replicas whose longest"
                            + " is shortest, plus the " + DrainTimelines.IDLE_RETURN
                            + " s the drain hook takes at least; per run, as each run's"
                            + " requests land apart");
        } else {
            System.out.println(
                    "  change to last old Pod gone: from the image edit to the last Pod of the old image deleted"
                            + " from the API server");
        }
        System.out.println();
    }
}
