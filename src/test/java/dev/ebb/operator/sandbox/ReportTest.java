package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sandbox.Timeline.Mark;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import dev.ebb.operator.sim.LoadGenerator.Request;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** What a person reads off the sandbox: its verdict, its table, and its page. */
class ReportTest {
    private static final Instant ORIGIN = Instant.parse("2026-01-01T00:00:00Z");
    private static final String R0 = "qwen-server-r0-m0";
    private static final String R1 = "qwen-server-r1-m0";

    private static Request request(long id, String pod, double from, Double to, Outcome outcome) {
        return new Request(id, pod, at(from), to == null ? null : at(to), outcome, "");
    }

    private static Instant at(double seconds) {
        return ORIGIN.plusMillis(Math.round(seconds * 1000));
    }

    /** A run of the sandbox's choreography whose load starts at {@code loadStarts} s. */
    private static Run run(Removal removal, double loadStarts, List<Request> requests, List<Mark> marks) {
        List<Mark> all = new ArrayList<>(marks);
        all.add(new Mark(loadStarts, "", Kind.STEP, Timeline.LOAD_STARTS));
        all.sort(Comparator.comparingDouble(Mark::at));
        return new Run(removal, Choreography.sandbox(), ORIGIN, loadStarts + 70, requests, 0, at(loadStarts + 10), all);
    }

    @Test
    void requestsThatOverlapOnAReplicaTakeRowsOfTheirOwnAndLaterOnesReuseAFreedRow() {
        Request a = request(0, R0, 0, 10.0, Outcome.COMPLETED);
        Request b = request(1, R0, 5, 15.0, Outcome.COMPLETED);
        Request c = request(2, R0, 10, 20.0, Outcome.COMPLETED);
        Request d = request(3, R0, 16, 30.0, Outcome.COMPLETED);
        Request stillRunning = request(4, R0, 12, null, Outcome.CUT);

        assertThat(Report.rows(List.of(d, c, b, a))).containsExactly(List.of(a, c), List.of(b, d));
        assertThat(Report.rows(List.of(a, b, stillRunning, d)))
                .containsExactly(List.of(a, stillRunning), List.of(b, d));
        assertThat(Report.rows(List.of())).isEmpty();
    }

    @Test
    void theVerdictGivesTheFirstRunsCutsOutOfItsRequestsThenEachOthersCuts() {
        List<Request> ebb =
                List.of(request(0, R0, 5, 20.0, Outcome.COMPLETED), request(1, R1, 5, 60.0, Outcome.COMPLETED));
        List<Request> hookOnly =
                List.of(request(0, R0, 5, 20.0, Outcome.COMPLETED), request(1, R1, 5, 30.0, Outcome.CUT));
        List<Request> naive = List.of(request(0, R0, 5, 15.0, Outcome.CUT), request(1, R1, 5, 15.0, Outcome.CUT));

        String verdict = Report.verdict(List.of(
                run(Removal.EBB, 4, ebb, List.of()),
                run(Removal.HOOK_ONLY, 4, hookOnly, List.of()),
                run(Removal.NAIVE, 4, naive, List.of())));

        assertThat(verdict).isEqualTo("Ebb: 0 of 2 cut; hook only: 1; naive: 2");
    }

    @Test
    void theTableSaysWhatEachRowCountsAndLeavesOutCountsThatAreZeroInEveryRun() {
        // request 0 of the sandbox's set is one of its long generations (every third, the first included)
        Choreography sandbox = Choreography.sandbox();
        assertThat(sandbox.load().duration(sandbox.load().lengths().get(0)).toSeconds())
                .isGreaterThan(sandbox.grace());
        List<Request> cutLong = List.of(request(0, R1, 5, 30.0, Outcome.CUT), request(1, R0, 5, 8.0, Outcome.CUT));
        Run hookOnly = run(Removal.HOOK_ONLY, 4, cutLong, List.of(new Mark(40, R1, Kind.GONE, "")));
        Run ebb = run(Removal.EBB, 4, List.of(request(0, R0, 5, 60.0, Outcome.COMPLETED)), List.of());

        String table = Report.summary(List.of(ebb, hookOnly));

        assertThat(table.lines().toList())
                .containsExactly(
                        "                                                                           Ebb   hook only",
                        "requests that streamed to the end                                            1           0",
                        "requests cut mid-stream                                                      0           2",
                        "  of them longer than the 30 s grace, which no hook can wait out             0           1",
                        "seconds from 'scale to 2' until the last Pod to leave was gone               -          26");
    }

    @Test
    void thePageHeadsWithTheVerdictAndStartsEveryChartWhereItsLoadStarts() {
        // the same request, 10 s after each run's load started: at 5 s into one run and at 25 s into the other
        Run early = run(
                Removal.EBB,
                5,
                List.of(request(0, R0, 15, 35.0, Outcome.COMPLETED)),
                List.of(
                        new Mark(1, R0, Kind.CREATED, ""),
                        new Mark(2, R0, Kind.SERVING, ""),
                        new Mark(15, "", Kind.STEP, "scale to 2")));
        Run late = run(
                Removal.NAIVE,
                25,
                List.of(request(0, R0, 35, 55.0, Outcome.CUT)),
                List.of(
                        new Mark(21, R0, Kind.CREATED, ""),
                        new Mark(22, R0, Kind.SERVING, ""),
                        new Mark(35, "", Kind.STEP, "scale to 2"),
                        new Mark(40, R0, Kind.DELETED, ""),
                        new Mark(40.01, R0, Kind.SIGTERM, ""),
                        new Mark(40.02, R0, Kind.GONE, ""),
                        new Mark(55, R0, Kind.CUT, "request 0")));

        String page = Page.html(List.of(early, late));

        assertThat(page).contains("<h1>Ebb: 0 of 1 cut; naive: 1</h1>");
        // both requests start 10 s after their load, 70 s being the longest run from its load start: the same place
        assertThat(styles(page, "request"))
                .containsExactly("left:14.29%;width:28.57%;top:20px", "left:14.29%;width:28.57%;top:20px");
        assertThat(titles(page, "request \\d+, [0-9.]+-[0-9.]+ s, \\w+"))
                .containsExactly("request 0, 10.0-30.0 s, completed", "request 0, 10.0-30.0 s, cut");
        // a SIGTERM that lasted 10 ms still gets a segment, which the stylesheet gives a least width
        assertThat(page).contains("class=\"seg sigterm\"", ".seg{top:0;height:16px;min-width:3px}");
        assertThat(page).containsPattern("<i class=\"request cut\"[^>]*title=\"request 0, 10.0-30.0 s, cut\"");
    }

    private static List<String> styles(String page, String kind) {
        Matcher m = Pattern.compile("<i class=\"" + kind + "(?: cut)?\" style=\"([^\"]*)\"")
                .matcher(page);
        return m.results().map(r -> r.group(1)).toList();
    }

    private static List<String> titles(String page, String shape) {
        Matcher m = Pattern.compile("title=\"(" + shape + ")\"").matcher(page);
        return m.results().map(r -> r.group(1)).toList();
    }
}
