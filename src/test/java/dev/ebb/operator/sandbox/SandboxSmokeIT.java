package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sim.LoadGenerator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sandbox's story, shortened: under the same load and the same steps (4 replicas scaled to 2, then one Pod deleted
 * by hand), Ebb cuts no request and naive deletion cuts some.
 */
class SandboxSmokeIT {

    @Test
    void ebbCutsNothingWhereNaiveDeletionCuts() throws Exception {
        Choreography smoke = Choreography.smoke();

        Run ebb = Scenario.play(Removal.EBB, smoke, line -> { });
        Run naive = Scenario.play(Removal.NAIVE, smoke, line -> { });

        assertThat(ebb.cut()).as("requests Ebb cut: %s", ebb.requests().stream()
                .filter(r -> r.outcome() == LoadGenerator.Outcome.CUT).toList()).isZero();
        assertThat(ebb.completed()).isPositive();
        assertThat(naive.cut()).as("requests naive deletion cut").isPositive();
        // three replicas went in each run: two by the scale-down, one by hand
        assertThat(ebb.marks()).filteredOn(m -> m.kind() == Kind.GONE).hasSize(3);
        assertThat(naive.marks()).filteredOn(m -> m.kind() == Kind.GONE).hasSize(3);
        // Ebb withdrew and read each scaled-down replica before deleting it; nothing was killed at its deadline
        assertThat(ebb.marks()).filteredOn(m -> m.kind() == Kind.WITHDRAWN).hasSizeGreaterThanOrEqualTo(2);
        assertThat(ebb.marks()).filteredOn(m -> m.kind() == Kind.OPERATOR_READ).isNotEmpty();
        assertThat(ebb.marks()).noneMatch(m -> m.kind() == Kind.KILLED);
        String page = Report.html(List.of(ebb, naive));
        assertThat(page).contains("<svg", "qwen-server-r3-m0", "requests cut");
        assertThat(Report.table(List.of(ebb, naive))).contains("Ebb", "naive");
    }
}
