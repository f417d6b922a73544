package dev.ebb.operator.sandbox;

import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sandbox.Timeline.Mark;
import dev.ebb.operator.sim.LoadGenerator;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/** Runs as a person reads them: a timeline per replica, a table side by side, and the same as an HTML page. */
public final class Report {
    private static final int WIDTH = 960;
    private static final int LABEL = 170;
    private static final int ROW = 26;

    private Report() {
    }

    /** Per replica, in order: what happened when; runs of reads folded into one line. */
    public static String timeline(Run run) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%s — %s (%s)%n", run.removal().label(), run.choreography().title(), run.removal().description()));
        run.marks().stream().filter(m -> m.kind() == Kind.STEP)
                .forEach(m -> out.append(String.format(Locale.ROOT, "  %6.1f s  %s%n", m.at(), m.detail())));
        for (String pod : run.pods()) {
            out.append(String.format(Locale.ROOT, "  %s%n", pod));
            List<Mark> marks = run.marks().stream().filter(m -> m.pod().equals(pod) && m.kind() != Kind.CUT).toList();
            for (int i = 0; i < marks.size(); ) {
                Mark first = marks.get(i);
                int j = i;
                while (j + 1 < marks.size() && folded(first.kind()) && marks.get(j + 1).kind() == first.kind()) {
                    j++;
                }
                List<Mark> group = marks.subList(i, j + 1);
                String when = group.size() == 1 ? String.format(Locale.ROOT, "%6.1f s        ", first.at())
                        : String.format(Locale.ROOT, "%6.1f-%-6.1f s ", first.at(), group.get(group.size() - 1).at());
                out.append(String.format(Locale.ROOT, "    %s %-15s %s%n", when, label(first.kind()), group.size() == 1 ? first.detail() : tally(group)));
                i = j + 1;
            }
            long done = run.requests().stream().filter(r -> pod.equals(r.pod()) && r.outcome() == LoadGenerator.Outcome.COMPLETED).count();
            long cut = run.requests().stream().filter(r -> pod.equals(r.pod()) && r.outcome() == LoadGenerator.Outcome.CUT).count();
            out.append(String.format(Locale.ROOT, "    %-22s %d completed, %d cut%n", "requests served", done, cut));
        }
        return out.toString();
    }

    /** The request counts both the text table and the page show, in this order. */
    private static final Map<String, ToLongFunction<Run>> COUNTS = counts();

    private static Map<String, ToLongFunction<Run>> counts() {
        Map<String, ToLongFunction<Run>> counts = new LinkedHashMap<>();
        counts.put("requests completed", Run::completed);
        counts.put("requests cut", Run::cut);
        counts.put("  of them longer than the grace", Run::cutLongerThanGrace);
        counts.put("never streamed", Run::rejected);
        counts.put("refusals, sent again", Run::refusals);
        return counts;
    }

    /** The runs side by side, one column each: the request counts, then the times, in seconds unless said. */
    public static String table(List<Run> runs) {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "  %-44s", ""));
        runs.forEach(r -> out.append(String.format(Locale.ROOT, "%12s", r.removal().label())));
        out.append(System.lineSeparator());
        COUNTS.forEach((label, value) -> row(out, runs, label, r -> String.format(Locale.ROOT, "%d", value.applyAsLong(r))));
        boolean scaleDown = runs.stream().anyMatch(r -> r.floor().isPresent());
        row(out, runs, scaleDown ? "change to last leaving Pod gone (s)" : "change to last old Pod gone (s)",
                r -> r.wallTime().isPresent() ? String.format(Locale.ROOT, "%.1f", r.wallTime().getAsDouble()) : "-");
        if (scaleDown) {
            row(out, runs, "floor (s)", r -> r.floor().isPresent() ? String.format(Locale.ROOT, "%.1f", r.floor().getAsDouble()) : "-");
            row(out, runs, "wall time / floor", r -> ratio(r.wallTime(), r.floor()));
            row(out, runs, "floor of the Pods that left (s)", r -> r.floorOfLeaving().isPresent()
                    ? String.format(Locale.ROOT, "%.1f", r.floorOfLeaving().getAsDouble()) : "-");
            row(out, runs, "wall time / floor of the Pods that left", r -> ratio(r.wallTime(), r.floorOfLeaving()));
        }
        row(out, runs, "run took (s)", r -> String.format(Locale.ROOT, "%.1f", r.seconds()));
        return out.toString();
    }

    private static String ratio(OptionalDouble of, OptionalDouble to) {
        return of.isPresent() && to.isPresent() ? String.format(Locale.ROOT, "%.2f", of.getAsDouble() / to.getAsDouble()) : "-";
    }

    private static void row(StringBuilder out, List<Run> runs, String label, Function<Run, String> value) {
        out.append(String.format(Locale.ROOT, "  %-44s", label));
        runs.forEach(r -> out.append(String.format(Locale.ROOT, "%12s", value.apply(r))));
        out.append(System.lineSeparator());
    }

    private static boolean folded(Kind kind) {
        return kind == Kind.OPERATOR_READ || kind == Kind.HOOK_READ;
    }

    private static String tally(List<Mark> reads) {
        Map<String, Long> counts = reads.stream().map(m -> m.detail().split("[ (]", 2)[0])
                .collect(Collectors.groupingBy(Function.identity(), LinkedHashMap::new, Collectors.counting()));
        return reads.size() + " reads: " + counts.entrySet().stream().map(e -> e.getKey() + " x" + e.getValue()).collect(Collectors.joining(", "))
                + "; last: " + reads.get(reads.size() - 1).detail();
    }

    private static String label(Kind kind) {
        return switch (kind) {
            case OPERATOR_READ -> "operator read";
            case HOOK_READ -> "hook read";
            case HOOK_RETURNED -> "hook returned";
            default -> kind.name().toLowerCase(Locale.ROOT);
        };
    }

    /**
     * A page with one chart per run: a lane per replica, coloured by state, with each request it served as a bar below
     * (red if cut, with a cross where), and each step of the run as a labelled line across.
     */
    public static String html(List<Run> runs) {
        StringBuilder page = new StringBuilder("""
                <!DOCTYPE html>
                <html><head><meta charset="utf-8"><title>Ebb sandbox</title>
                <style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse}
                td,th{padding:4px 12px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}
                .key span{display:inline-block;width:14px;height:10px;margin:0 4px 0 14px}</style></head><body>
                <h1>Ebb sandbox</h1>
                <p class="key"><span style="background:#bbb"></span>starting<span style="background:#3a3"></span>serving
                <span style="background:#e9b400"></span>withdrawn, operator reading<span style="background:#f80"></span>deleted, preStop hook
                <span style="background:#c33"></span>SIGTERM to exit &nbsp; under each replica, its requests:
                <span style="background:#275"></span>completed<span style="background:#c00"></span>cut
                &nbsp; <b style="color:#c00">&#x2715;</b> request cut &nbsp; <b style="color:#36c">- - -</b> a step of the run</p>
                """);
        page.append("<table><tr><th></th>");
        runs.forEach(r -> page.append("<th>").append(escape(r.removal().label())).append("</th>"));
        page.append("</tr>");
        COUNTS.forEach((label, value) -> htmlRow(page, runs, label, value));
        page.append("</table>");
        double span = runs.stream().mapToDouble(Run::seconds).max().orElse(1);
        for (Run run : runs) {
            page.append("<h2>").append(escape(run.removal().label() + ": " + run.choreography().title())).append("</h2><p>")
                    .append(escape(run.removal().description())).append("</p>");
            page.append(chart(run, span));
        }
        return page.append("</body></html>\n").toString();
    }

    private static void htmlRow(StringBuilder page, List<Run> runs, String label, ToLongFunction<Run> value) {
        page.append("<tr><td>").append(escape(label)).append("</td>");
        runs.forEach(r -> page.append("<td>").append(value.applyAsLong(r)).append("</td>"));
        page.append("</tr>");
    }

    /** Room above the lanes for the time axis and the steps' labels, which take turns on three lines. */
    private static final int HEAD = 52;
    private static final int STATE_BAR = 16;
    private static final int REQUEST_ROW = 5;
    private static final int STEP_LABEL = 28;

    private static String chart(Run run, double span) {
        List<String> pods = run.pods();
        Map<String, List<List<LoadGenerator.Request>>> lanes = new HashMap<>();
        pods.forEach(pod -> lanes.put(pod, rows(run.requests().stream().filter(r -> pod.equals(r.pod())).toList())));
        int height = HEAD + pods.stream().mapToInt(pod -> laneHeight(lanes.get(pod).size())).sum();
        Function<Double, Double> x = t -> LABEL + Math.max(0, t) / span * (WIDTH - LABEL - 10);
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
                "<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">", WIDTH, height));
        for (int s = 0; s <= span; s += 10) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"16\" y2=\"%d\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"12\">%d s</text>",
                    x.apply((double) s), x.apply((double) s), height, x.apply((double) s) - 8, s));
        }
        List<Mark> steps = run.marks().stream().filter(m -> m.kind() == Kind.STEP).toList();
        for (int i = 0; i < steps.size(); i++) {
            Mark step = steps.get(i);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#36c\" stroke-dasharray=\"3,3\"><title>%s</title></line>",
                    x.apply(step.at()), x.apply(step.at()), 18 + 11 * (i % 3), height, escape(step.detail())));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" fill=\"#36c\">%s<title>%s at %.1f s</title></text>",
                    x.apply(step.at()) + 2, 26 + 11 * (i % 3), escape(shortened(step.detail())), escape(step.detail()), step.at()));
        }
        int y = HEAD;
        for (String pod : pods) {
            svg.append(String.format(Locale.ROOT, "<text x=\"0\" y=\"%d\">%s</text>", y + 13, escape(pod)));
            List<Mark> marks = run.marks().stream().filter(m -> m.pod().equals(pod)).toList();
            State state = State.GONE;
            double since = 0;
            for (Mark mark : marks) {
                State next = STATES.get(mark.kind());
                if (next == null) {
                    continue;
                }
                bar(svg, x, y, since, mark.at(), state);
                state = next;
                since = mark.at();
            }
            bar(svg, x, y, since, run.seconds(), state);
            List<List<LoadGenerator.Request>> rows = lanes.get(pod);
            for (int row = 0; row < rows.size(); row++) {
                for (LoadGenerator.Request request : rows.get(row)) {
                    double from = run.at(request.start());
                    double to = request.end() == null ? run.seconds() : run.at(request.end());
                    svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>",
                            x.apply(from), y + STATE_BAR + 2 + row * REQUEST_ROW, Math.max(1, x.apply(to) - x.apply(from)), REQUEST_ROW - 1,
                            request.outcome() == LoadGenerator.Outcome.CUT ? "#c00" : "#275",
                            escape(String.format(Locale.ROOT, "request %d, %.1f-%.1f s, %s", request.id(), from, to,
                                    request.outcome().name().toLowerCase(Locale.ROOT)))));
                }
            }
            for (Mark cut : marks.stream().filter(m -> m.kind() == Kind.CUT).toList()) {
                svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" fill=\"#c00\" font-weight=\"bold\">&#x2715;<title>%s</title></text>",
                        x.apply(cut.at()) - 4, y + 14, escape("cut at " + cut.at() + " s: " + cut.detail())));
            }
            y += laneHeight(rows.size());
        }
        return svg.append("</svg>").toString();
    }

    private static int laneHeight(int requestRows) {
        return STATE_BAR + 2 + requestRows * REQUEST_ROW + 8;
    }

    /** A step's label short enough to sit beside its line; the full text is its tooltip. */
    static String shortened(String detail) {
        return detail.length() <= STEP_LABEL ? detail : detail.substring(0, STEP_LABEL - 1) + "\u2026";
    }

    /**
     * A replica's requests on as few rows as keep any two that overlap in time apart: each, by start, on the first row
     * whose last request has ended by then. A request still running at the end (no end) takes its row for good.
     */
    static List<List<LoadGenerator.Request>> rows(List<LoadGenerator.Request> requests) {
        List<List<LoadGenerator.Request>> rows = new ArrayList<>();
        requests.stream().filter(r -> r.start() != null).sorted(Comparator.comparing(LoadGenerator.Request::start)).forEach(request -> {
            for (List<LoadGenerator.Request> row : rows) {
                LoadGenerator.Request last = row.get(row.size() - 1);
                if (last.end() != null && !last.end().isAfter(request.start())) {
                    row.add(request);
                    return;
                }
            }
            rows.add(new ArrayList<>(List.of(request)));
        });
        return rows;
    }

    private static void bar(StringBuilder svg, Function<Double, Double> x, int y, double from, double to, State state) {
        if (state.colour() != null && to > from) {
            svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"><title>%s %.1f-%.1f s</title></rect>",
                    x.apply(from), y, x.apply(to) - x.apply(from), state.colour(), escape(state.meaning()), from, to));
        }
    }

    /** A stretch of a replica's life in the chart; a Pod gone has none. */
    private record State(String colour, String meaning) {
        static final State GONE = new State(null, null);
    }

    private static final Map<Kind, State> STATES = Map.of(
            Kind.CREATED, new State("#bbb", "starting"),
            Kind.SERVING, new State("#3a3", "serving"),
            Kind.WITHDRAWN, new State("#e9b400", "withdrawn; the operator reads the engine until it is idle twice"),
            Kind.DELETED, new State("#f80", "deleted; preStop hook running"),
            Kind.SIGTERM, new State("#c33", "SIGTERM until the Pod is gone"),
            Kind.GONE, State.GONE);

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
