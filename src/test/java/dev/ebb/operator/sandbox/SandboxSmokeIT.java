package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sim.LoadGenerator;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sandbox's story, shortened: under the same load (some generations longer than the grace) and the same step (4
 * replicas scaled to 2), Ebb cuts no request, the preStop sleep cuts only generations longer than its sleep, and plain
 * deletion cuts what the leaving replicas held.
 */
class SandboxSmokeIT {
    private static double at(Run run, String pod, Kind kind) {
        return run.marks().stream()
                .filter(m -> m.pod().equals(pod) && m.kind() == kind)
                .mapToDouble(Timeline.Mark::at)
                .findFirst()
                .orElseThrow(() -> new AssertionError(pod + " has no " + kind + " mark: " + run.marks()));
    }

    @Test
    void ebbCutsNothingWhereTheHookAloneCutsLongGenerationsAndNaiveDeletionCutsMore() throws Exception {
        Choreography smoke = Choreography.smoke();

        List<Run> runs = Sandbox.playAtOnce(smoke, null);
        Run ebb = runs.get(0);
        Run hookOnly = runs.get(1);
        Run naive = runs.get(2);

        assertThat(runs).extracting(Run::removal).containsExactly(Removal.EBB, Removal.HOOK_ONLY, Removal.NAIVE);
        assertThat(ebb.cut()).as("requests Ebb cut: %s", cutOf(ebb)).isZero();
        assertThat(ebb.completed()).isEqualTo(smoke.load().requests());
        assertThat(naive.cut()).as("requests naive deletion cut").isPositive();
        // the sleep outlasts every short generation, so what the hook alone cuts is a long one: the point of the
        // sandbox
        Duration sleep = Duration.ofSeconds(PlainFleet.FIXED_SLEEP_SECONDS);
        assertThat(smoke.load().duration(smoke.load().maxTokens())).isLessThan(sleep);
        assertThat(hookOnly.cutLongerThanGrace())
                .as("requests the hook alone cut: %s", cutOf(hookOnly))
                .isEqualTo(hookOnly.cut());
        // every plain arm lost the two highest ordinals; Ebb withdrew two replicas and read them idle before deleting
        // them
        assertThat(naive.marks()).filteredOn(m -> m.kind() == Kind.GONE).hasSize(2);
        List<String> withdrawn = ebb.marks().stream()
                .filter(m -> m.kind() == Kind.WITHDRAWN)
                .map(Timeline.Mark::pod)
                .distinct()
                .toList();
        assertThat(withdrawn).hasSize(2);
        for (String pod : withdrawn) {
            double deleted = at(ebb, pod, Kind.DELETED);
            assertThat(at(ebb, pod, Kind.WITHDRAWN)).isLessThan(deleted);
            assertThat(ebb.marks())
                    .anyMatch(m -> m.pod().equals(pod)
                            && m.kind() == Kind.OPERATOR_READ
                            && m.detail().startsWith("Idle")
                            && m.at() <= deleted);
        }
        assertThat(ebb.marks()).noneMatch(m -> m.kind() == Kind.KILLED);
        assertThat(Report.verdict(runs))
                .isEqualTo(String.format(
                        "Ebb: 0 of %d cut; hook only: %d; naive: %d",
                        smoke.load().requests(), hookOnly.cut(), naive.cut()));
        assertThat(Page.html(runs)).contains(withdrawn.get(0), "requests cut mid-stream");
    }

    private static List<LoadGenerator.Request> cutOf(Run run) {
        return run.requests().stream()
                .filter(r -> r.outcome() == LoadGenerator.Outcome.CUT)
                .toList();
    }
}
