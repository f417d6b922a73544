package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.sandbox.Choreography.ClientPath;
import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sandbox.Timeline.Mark;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import dev.ebb.operator.sim.LoadGenerator.Request;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** What a run's table reports, from the requests and marks it recorded. */
class RunTest {
    private static final Choreography SCALE_DOWN = Choreography.scaleDownBench(ClientPath.ROUTER);
    private static final Instant ORIGIN = Instant.parse("2026-01-01T00:00:00Z");
    private static final Instant CHANGED = ORIGIN.plusSeconds(20);
    /** The index of the set's longest generation. */
    private static final int LONGEST = IntStream.range(
                    0, SCALE_DOWN.load().lengths().size())
            .boxed()
            .max(Comparator.comparing(i -> SCALE_DOWN.load().lengths().get(i)))
            .orElseThrow();

    private static Duration planned(int index) {
        return SCALE_DOWN.load().duration(SCALE_DOWN.load().lengths().get(index));
    }

    /** A request of the set, at this index, started on this replica this long before the change. */
    private static Request startedBefore(int index, String pod, Duration before, Outcome outcome) {
        Instant start = CHANGED.minus(before);
        return new Request(index, pod, start, start.plus(planned(index)), outcome, "");
    }

    private static Run run(List<Request> requests, List<Mark> marks) {
        return new Run(Removal.EBB, SCALE_DOWN, ORIGIN, 200, requests, 0, CHANGED, marks);
    }

    private static String pod(int ordinal) {
        return "qwen-server-r" + ordinal + "-m0";
    }

    @Test
    void wallTimeRunsFromTheChangeToTheLastPodGoneAfterIt() {
        List<Mark> marks = List.of(
                new Mark(5, pod(9), Kind.GONE, ""),
                new Mark(20, "", Kind.STEP, "scale to 2"),
                new Mark(51.5, pod(3), Kind.GONE, ""),
                new Mark(80, pod(2), Kind.GONE, ""));

        assertThat(run(List.of(), marks).wallTime()).hasValue(60.0);
        assertThat(run(List.of(), List.of(new Mark(20, "", Kind.STEP, "scale to 2")))
                        .wallTime())
                .isEmpty();
    }

    @Test
    void cutRequestsLongerThanTheGraceAreCountedApart() {
        List<Integer> lengths = SCALE_DOWN.load().lengths();
        int longer = indexWhere(lengths, true);
        int shorter = indexWhere(lengths, false);

        Run run = run(
                List.of(
                        startedBefore(longer, pod(0), Duration.ofSeconds(1), Outcome.CUT),
                        startedBefore(shorter, pod(1), Duration.ofSeconds(1), Outcome.CUT),
                        startedBefore(2, pod(1), Duration.ofSeconds(1), Outcome.COMPLETED)),
                List.of());

        assertThat(run.cut()).isEqualTo(2);
        assertThat(run.cutLongerThanGrace()).isEqualTo(1);
    }

    @Test
    void theFloorOfThePodsThatLeftCountsEveryGenerationSentToThemEvenAfterTheChange() {
        // r2 and r3 leave; r3 is sent one more generation 4 s after the change (a keep-alive client); r0 stays, and
        // its longer generation does not count
        List<Request> requests = List.of(
                startedBefore(0, pod(2), Duration.ofSeconds(1), Outcome.COMPLETED),
                startedBefore(1, pod(3), Duration.ofSeconds(1), Outcome.COMPLETED),
                startedBefore(2, pod(3), Duration.ofSeconds(-4), Outcome.COMPLETED),
                startedBefore(LONGEST, pod(0), Duration.ofSeconds(1), Outcome.COMPLETED));
        List<Mark> marks = List.of(
                new Mark(20, "", Kind.STEP, "scale to 2"),
                new Mark(300, pod(2), Kind.GONE, ""),
                new Mark(310, pod(3), Kind.GONE, ""));

        double lastOnLeaving = Math.max(
                Math.max(planned(0).toMillis() / 1000.0 - 1, planned(1).toMillis() / 1000.0 - 1),
                planned(2).toMillis() / 1000.0 + 4);
        assertThat(planned(LONGEST).toMillis() / 1000.0 - 1).isGreaterThan(lastOnLeaving);
        assertThat(run(requests, marks).floorOfLeaving()).hasValue(lastOnLeaving + DrainTimelines.IDLE_RETURN);
        assertThat(new Run(Removal.EBB, Choreography.rolloutBench(), ORIGIN, 200, requests, 0, CHANGED, marks)
                        .floorOfLeaving())
                .isEmpty();
    }

    @Test
    void theFloorIsTheSecondShortestLongestGenerationStillStreamingAtTheChangePlusTheHook() {
        // one generation per replica, each started 1 s before the change; two more on r0 that do not count: one ended
        // before the change, one started after it
        List<Request> requests = List.of(
                startedBefore(0, pod(0), Duration.ofSeconds(1), Outcome.COMPLETED),
                startedBefore(1, pod(1), Duration.ofSeconds(1), Outcome.COMPLETED),
                startedBefore(2, pod(2), Duration.ofSeconds(1), Outcome.COMPLETED),
                startedBefore(3, pod(3), Duration.ofSeconds(1), Outcome.COMPLETED),
                startedBefore(4, pod(0), planned(4).plusSeconds(5), Outcome.COMPLETED),
                startedBefore(5, pod(0), Duration.ofSeconds(-1), Outcome.COMPLETED));

        double secondShortest = IntStream.range(0, 4)
                .mapToDouble(i -> planned(i).toMillis() / 1000.0 - 1)
                .sorted()
                .skip(1)
                .findFirst()
                .orElseThrow();
        assertThat(run(requests, List.of()).floor()).hasValue(secondShortest + DrainTimelines.IDLE_RETURN);
    }

    @Test
    void aRolloutHasNoFloor() {
        Run rollout = new Run(Removal.EBB, Choreography.rolloutBench(), ORIGIN, 200, List.of(), 0, CHANGED, List.of());

        assertThat(rollout.floor()).isEmpty();
    }

    private static int indexWhere(List<Integer> lengths, boolean longerThanGrace) {
        for (int i = 0; i < lengths.size(); i++) {
            if (SCALE_DOWN.load().duration(lengths.get(i)).compareTo(Duration.ofSeconds(SCALE_DOWN.grace())) > 0
                    == longerThanGrace) {
                return i;
            }
        }
        throw new AssertionError(
                "the bench's set has no generation " + (longerThanGrace ? "longer" : "shorter") + " than the grace");
    }
}
