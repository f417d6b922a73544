package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sandbox.Timeline.Mark;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import dev.ebb.operator.sim.LoadGenerator.Request;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The sandbox's page: what a person reads off it about the run's steps and each replica's requests. */
class ReportTest {
    private static final Instant ORIGIN = Instant.parse("2026-01-01T00:00:00Z");
    private static final String R0 = "qwen-server-r0-m0";
    private static final String R1 = "qwen-server-r1-m0";

    private static Request request(long id, String pod, int from, Integer to, Outcome outcome) {
        return new Request(id, pod, ORIGIN.plusSeconds(from), to == null ? null : ORIGIN.plusSeconds(to), outcome, "");
    }

    @Test
    void requestsThatOverlapOnAReplicaTakeRowsOfTheirOwnAndLaterOnesReuseAFreedRow() {
        Request a = request(0, R0, 0, 10, Outcome.COMPLETED);
        Request b = request(1, R0, 5, 15, Outcome.COMPLETED);
        Request c = request(2, R0, 10, 20, Outcome.COMPLETED);
        Request d = request(3, R0, 16, 30, Outcome.COMPLETED);
        Request stillRunning = request(4, R0, 12, null, Outcome.CUT);

        assertThat(Report.rows(List.of(d, c, b, a))).containsExactly(List.of(a, c), List.of(b, d));
        assertThat(Report.rows(List.of(a, b, stillRunning, d))).containsExactly(List.of(a, stillRunning), List.of(b, d));
        assertThat(Report.rows(List.of())).isEmpty();
    }

    @Test
    void thePageLabelsEachStepAndDrawsEveryRequestOnItsReplicasLaneCutOnesInRed() {
        List<Mark> marks = List.of(new Mark(1, R0, Kind.CREATED, ""), new Mark(1, R1, Kind.CREATED, ""),
                new Mark(2, R0, Kind.SERVING, ""), new Mark(2, R1, Kind.SERVING, ""),
                new Mark(20, "", Kind.STEP, "scale to 1"), new Mark(30, R1, Kind.GONE, ""),
                new Mark(25, R1, Kind.CUT, "request 2"),
                new Mark(60, "", Kind.STEP, "load starts: 3 clients, 30 requests of 2 to 12 s each"), new Mark(70, "", Kind.STEP, "settled"));
        List<Request> requests = List.of(request(0, R0, 3, 13, Outcome.COMPLETED), request(1, R0, 5, 40, Outcome.COMPLETED),
                request(2, R1, 4, 25, Outcome.CUT));
        Run run = new Run(Removal.EBB, Choreography.sandbox(), ORIGIN, 80, requests, 0, ORIGIN.plusSeconds(20), marks);

        String page = Report.html(List.of(run));

        assertThat(page).contains(">scale to 1<", ">settled<", ">load starts: 3 clients, 30 \u2026<");
        assertThat(titles(page, "request \\d+, [0-9.]+-[0-9.]+ s, \\w+"))
                .containsExactlyInAnyOrder("request 0, 3.0-13.0 s, completed", "request 1, 5.0-40.0 s, completed", "request 2, 4.0-25.0 s, cut");
        assertThat(page).containsPattern("fill=\"#c00\"><title>request 2, ");
        assertThat(page).containsPattern("fill=\"#275\"><title>request 1, ");
    }

    private static List<String> titles(String page, String shape) {
        Matcher m = Pattern.compile("<title>(" + shape + ")</title>").matcher(page);
        return m.results().map(r -> r.group(1)).toList();
    }
}
