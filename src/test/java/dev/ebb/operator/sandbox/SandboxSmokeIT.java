package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.render.Names;
import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sim.LoadGenerator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sandbox's story, shortened: under the same load and the same steps (4 replicas scaled to 2, then one Pod deleted
 * by hand), Ebb cuts no request and naive deletion cuts some.
 */
class SandboxSmokeIT {
    /** The Pod the choreography deletes by hand. */
    private static final String BY_HAND = Names.pod(OperatorFleet.NAME, OperatorFleet.ROLE, 0, 0);

    private static double at(Run run, String pod, Kind kind) {
        return run.marks().stream().filter(m -> m.pod().equals(pod) && m.kind() == kind).mapToDouble(Timeline.Mark::at).findFirst()
                .orElseThrow(() -> new AssertionError(pod + " has no " + kind + " mark: " + run.marks()));
    }

    @Test
    void ebbCutsNothingWhereNaiveDeletionCuts() throws Exception {
        Choreography smoke = Choreography.smoke();

        Run ebb = Scenario.play(Removal.EBB, smoke, line -> { });
        Run naive = Scenario.play(Removal.NAIVE, smoke, line -> { });

        assertThat(ebb.cut()).as("requests Ebb cut: %s", ebb.requests().stream()
                .filter(r -> r.outcome() == LoadGenerator.Outcome.CUT).toList()).isZero();
        assertThat(ebb.completed()).isPositive();
        assertThat(naive.cut()).as("requests naive deletion cut").isPositive();
        // naive deletion removed two by the scale-down and one by hand; Ebb at least the one by hand and one surplus (the
        // last surplus one is kept when the Pod deleted by hand is gone first: the role is back at 2 without it)
        assertThat(naive.marks()).filteredOn(m -> m.kind() == Kind.GONE).hasSize(3);
        // which replica the scale-down takes first depends on the load each carries: the idlest goes
        String scaledDown = ebb.marks().stream().filter(m -> m.kind() == Kind.WITHDRAWN && !m.pod().equals(BY_HAND))
                .map(Timeline.Mark::pod).findFirst().orElseThrow(() -> new AssertionError("nothing withdrawn: " + ebb.marks()));
        assertThat(ebb.marks()).filteredOn(m -> m.kind() == Kind.GONE).extracting(Timeline.Mark::pod)
                .contains(BY_HAND, scaledDown);
        // the Pod deleted by hand drained through its hook before SIGTERM
        assertThat(ebb.marks()).anyMatch(m -> m.kind() == Kind.HOOK_RETURNED && m.pod().equals(BY_HAND));
        // Ebb withdrew the scaled-down replica and read it idle before deleting it; nothing was killed at its deadline
        double deleted = at(ebb, scaledDown, Kind.DELETED);
        assertThat(at(ebb, scaledDown, Kind.WITHDRAWN)).isLessThan(deleted);
        assertThat(ebb.marks()).anyMatch(m -> m.pod().equals(scaledDown) && m.kind() == Kind.OPERATOR_READ
                && m.detail().startsWith("Idle") && m.at() <= deleted);
        assertThat(ebb.marks()).noneMatch(m -> m.kind() == Kind.KILLED);
        String page = Report.html(List.of(ebb, naive));
        assertThat(page).contains("<svg", scaledDown, "requests cut");
        assertThat(Report.table(List.of(ebb, naive))).contains("Ebb", "naive");
    }
}
