package dev.ebb.operator.bench;

import dev.ebb.operator.sandbox.Choreography;
import dev.ebb.operator.sandbox.Removal;
import dev.ebb.operator.sandbox.Report;
import dev.ebb.operator.sandbox.Run;
import dev.ebb.operator.sandbox.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Requests cut while replicas go away under streaming load: the same choreography (a scale-down, then a rollout)
 * played with Ebb, with naive deletion and with a fixed preStop sleep, side by side.
 */
public final class RemovalComparison {
    private RemovalComparison() {
    }

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(RemovalComparison::run);
    }

    static void run() throws InterruptedException {
        for (Choreography choreography : List.of(Choreography.scaleDownBench(), Choreography.rolloutBench())) {
            List<Run> runs = new ArrayList<>();
            for (Removal removal : Removal.values()) {
                runs.add(Scenario.play(removal, choreography, line -> { }));
            }
            System.out.printf(Locale.ROOT, "Requests cut during a %s (%s, grace %d s), one run each%n", choreography.title(),
                    choreography.load(), choreography.grace());
            System.out.print(Report.table(runs));
            System.out.println();
        }
    }
}
