package dev.ebb.operator.sandbox;

import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sandbox.Timeline.Mark;
import dev.ebb.operator.sim.LoadGenerator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The sandbox's runs as one HTML page: the verdict as its headline, the counts side by side, then a chart per run. The
 * charts share one time axis that starts when the load starts, so the same second sits at the same place in each. Each
 * replica has a lane coloured by its state, with the requests it served as thin bars below (red when cut, with a cross
 * where), and each step of the run as a dashed line across. Positions are percentages of the page's width, and labels
 * in the right half hang to the left of their line, so nothing runs off the chart at any window width.
 */
public final class Page {
    /** Seconds between two ticks of the time axis, the least that leaves at most this many ticks. */
    private static final int MAX_TICKS = 12;

    private static final int[] TICK_STEPS = {5, 10, 20, 30, 60, 120, 300, 600};
    /** Step labels take turns on this many lines, so that two steps close together do not print over each other. */
    static final int STEP_LINES = 3;
    /** Past this share of the axis a label hangs to the left of its position instead of the right. */
    private static final double HANG_LEFT_FROM = 55;
    /** A cross or a tick is centred on its time, except so close to the end that its right half would run off the chart. */
    private static final double CROSS_AT_EDGE = 98;

    private Page() {}

    public static String html(List<Run> runs) {
        double span = runs.stream()
                .mapToDouble(r -> r.seconds() - r.loadStartsAt())
                .max()
                .orElse(1);
        Choreography choreography = runs.get(0).choreography();
        StringBuilder page = new StringBuilder(HEAD);
        page.append("<h1>").append(escape(Report.verdict(runs))).append("</h1>\n");
        page.append("<p class=\"what\">")
                .append(escape(String.format(
                        Locale.ROOT,
                        "%s: %s, %s; grace %d s.",
                        choreography.title(),
                        choreography.load(),
                        choreography.path().description(),
                        choreography.grace())))
                .append("</p>\n");
        page.append("<table><tr><th></th>");
        runs.forEach(
                r -> page.append("<th>").append(escape(r.removal().label())).append("</th>"));
        page.append("</tr>\n");
        Report.summaryRows(runs).forEach((label, values) -> {
            page.append("<tr><td>").append(escape(label)).append("</td>");
            values.forEach(v -> page.append("<td>").append(escape(v)).append("</td>"));
            page.append("</tr>\n");
        });
        page.append("</table>\n").append(KEY);
        for (Run run : runs) {
            page.append("<section class=\"run\"><h2>")
                    .append(escape(String.format(
                            Locale.ROOT,
                            "%s: %d of %d cut",
                            run.removal().label(),
                            run.cut(),
                            run.requests().size())))
                    .append("</h2><p>")
                    .append(escape(run.removal().description()))
                    .append("</p>\n");
            chart(page, run, span);
            page.append("</section>\n");
        }
        return page.append("</body></html>\n").toString();
    }

    private static void chart(StringBuilder page, Run run, double span) {
        Axis axis = new Axis(run.loadStartsAt(), span);
        page.append(
                "<div class=\"chart\">\n<div class=\"row axis\"><div class=\"name\">seconds since the load started</div><div class=\"track\">");
        int step = tickStep(span);
        for (int s = 0; s <= span; s += step) {
            double at = axis.percent(s);
            String place = at == 0
                    ? "left:0"
                    : at >= CROSS_AT_EDGE - 1
                            ? String.format(Locale.ROOT, "right:%.2f%%", 100 - at)
                            : String.format(Locale.ROOT, "left:%.2f%%", at);
            page.append(String.format(
                    Locale.ROOT,
                    "<span class=\"label tick%s\" style=\"%s\">%d s</span>",
                    at == 0 || at >= CROSS_AT_EDGE - 1 ? "" : " centred",
                    place,
                    s));
        }
        page.append(
                "</div></div>\n<div class=\"row steps\"><div class=\"name\">what was done</div><div class=\"track\">");
        List<Mark> steps =
                run.marks().stream().filter(m -> m.kind() == Kind.STEP).toList();
        for (int i = 0; i < steps.size(); i++) {
            Mark mark = steps.get(i);
            double at = axis.at(mark.at());
            page.append(String.format(
                    Locale.ROOT,
                    "<span class=\"label step line%d %s\" style=\"%s\" title=\"%s\">%s</span>",
                    i % STEP_LINES,
                    anchor(at),
                    position(at),
                    escape(String.format(Locale.ROOT, "%s at %.1f s", mark.detail(), mark.at() - run.loadStartsAt())),
                    escape(mark.detail())));
        }
        page.append("</div></div>\n");
        for (String pod : run.pods()) {
            lane(page, run, pod, axis, steps);
        }
        page.append("</div>\n");
    }

    private static void lane(StringBuilder page, Run run, String pod, Axis axis, List<Mark> steps) {
        List<Mark> marks = run.marks().stream().filter(m -> m.pod().equals(pod)).toList();
        List<List<LoadGenerator.Request>> rows = Report.rows(
                run.requests().stream().filter(r -> pod.equals(r.pod())).toList());
        page.append(String.format(
                Locale.ROOT,
                "<div class=\"row lane\"><div class=\"name\">%s<small>%d served, %d cut</small></div>"
                        + "<div class=\"track\" style=\"height:%dpx\">",
                escape(pod),
                count(run, pod, LoadGenerator.Outcome.COMPLETED),
                count(run, pod, LoadGenerator.Outcome.CUT),
                22 + rows.size() * 5));
        steps.forEach(s -> page.append(
                String.format(Locale.ROOT, "<i class=\"stepline\" style=\"left:%.2f%%\"></i>", axis.at(s.at()))));
        State state = State.GONE;
        double since = 0;
        for (Mark mark : marks) {
            State next = STATES.get(mark.kind());
            if (next != null) {
                segment(page, axis, since, mark.at(), state);
                state = next;
                since = mark.at();
            }
        }
        segment(page, axis, since, run.seconds(), state);
        for (int row = 0; row < rows.size(); row++) {
            for (LoadGenerator.Request request : rows.get(row)) {
                double from = run.at(request.start());
                double to = request.end() == null ? run.seconds() : run.at(request.end());
                boolean cut = request.outcome() == LoadGenerator.Outcome.CUT;
                page.append(String.format(
                        Locale.ROOT,
                        "<i class=\"request%s\" style=\"left:%.2f%%;width:%.2f%%;top:%dpx\" title=\"%s\"></i>",
                        cut ? " cut" : "",
                        axis.at(from),
                        axis.at(to) - axis.at(from),
                        20 + row * 5,
                        escape(String.format(
                                Locale.ROOT,
                                "request %d, %.1f-%.1f s, %s",
                                request.id(),
                                from - run.loadStartsAt(),
                                to - run.loadStartsAt(),
                                request.outcome().name().toLowerCase(Locale.ROOT)))));
            }
        }
        for (Mark cut : marks.stream().filter(m -> m.kind() == Kind.CUT).toList()) {
            double at = axis.at(cut.at());
            page.append(String.format(
                    Locale.ROOT,
                    "<b class=\"label cross%s\" style=\"%s\" title=\"%s\">&#x2715;</b>",
                    at > CROSS_AT_EDGE ? "" : " centred",
                    at > CROSS_AT_EDGE ? "right:0" : String.format(Locale.ROOT, "left:%.2f%%", at),
                    escape(String.format(
                            Locale.ROOT, "cut at %.1f s: %s", cut.at() - run.loadStartsAt(), cut.detail()))));
        }
        page.append("</div></div>\n");
    }

    private static long count(Run run, String pod, LoadGenerator.Outcome outcome) {
        return run.requests().stream()
                .filter(r -> pod.equals(r.pod()) && r.outcome() == outcome)
                .count();
    }

    private static void segment(StringBuilder page, Axis axis, double from, double to, State state) {
        if (state.css() != null && to >= from && to >= axis.start()) {
            page.append(String.format(
                    Locale.ROOT,
                    "<i class=\"seg %s\" style=\"left:%.2f%%;width:%.2f%%\" title=\"%s\"></i>",
                    state.css(),
                    axis.at(from),
                    axis.at(to) - axis.at(from),
                    escape(String.format(
                            Locale.ROOT,
                            "%s, %.1f-%.1f s",
                            state.meaning(),
                            Math.max(0, from - axis.start()),
                            to - axis.start()))));
        }
    }

    static int tickStep(double span) {
        for (int step : TICK_STEPS) {
            if (span / step <= MAX_TICKS) {
                return step;
            }
        }
        return TICK_STEPS[TICK_STEPS.length - 1];
    }

    /** Labels in the right part of the axis hang to the left of their position, so they end inside the chart. */
    private static String anchor(double percent) {
        return percent >= HANG_LEFT_FROM ? "hang-left" : "hang-right";
    }

    private static String position(double percent) {
        return percent >= HANG_LEFT_FROM
                ? String.format(Locale.ROOT, "right:%.2f%%", 100 - percent)
                : String.format(Locale.ROOT, "left:%.2f%%", percent);
    }

    /** Seconds of a run to a share of the chart's width: 0 % when the load starts, 100 % at the end of the longest run. */
    private record Axis(double start, double span) {
        double at(double seconds) {
            return percent(seconds - start);
        }

        double percent(double sinceStart) {
            return Math.max(0, Math.min(100, sinceStart / span * 100));
        }
    }

    /** A stretch of a replica's life in the chart; a Pod gone has none. */
    private record State(String css, String meaning) {
        static final State GONE = new State(null, null);
    }

    private static final Map<Kind, State> STATES = Map.of(
            Kind.CREATED, new State("starting", "starting"),
            Kind.SERVING, new State("serving", "serving"),
            Kind.WITHDRAWN,
                    new State(
                            "withdrawn",
                            "withdrawn from the router; the operator reads the engine until it is idle twice"),
            Kind.DELETED, new State("deleted", "deleted; preStop hook running"),
            Kind.SIGTERM, new State("sigterm", "SIGTERM sent; the engine stops"),
            Kind.GONE, State.GONE);

    private static final String HEAD = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Ebb sandbox</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <style>
            body{font-family:sans-serif;margin:24px;color:#222}
            h1{font-size:1.6em;margin:0 0 .3em}
            h2{font-size:1.15em;margin:1.6em 0 .2em}
            table{border-collapse:collapse;margin:1em 0}
            td,th{padding:4px 12px;border-bottom:1px solid #ddd;text-align:right}
            td:first-child,th:first-child{text-align:left}
            .key i{display:inline-block;width:14px;height:10px;margin:0 4px 0 14px;vertical-align:middle}
            .row{display:flex;align-items:flex-start;border-bottom:1px solid #f2f2f2}
            .name{flex:0 0 12em;padding-right:8px;font-size:12px;overflow-wrap:anywhere}
            .name small{display:block;color:#777}
            .track{position:relative;flex:1 1 auto;min-width:0}
            .axis .track{height:16px}
            .steps .track{height:%dpx}
            .label{position:absolute;white-space:nowrap;font-size:11px}
            .hang-left{text-align:right}
            .tick{top:0;color:#555}
            .step{color:#36c}
            .line0{top:0}.line1{top:13px}.line2{top:26px}
            .track i{position:absolute;display:block}
            .stepline{top:0;bottom:0;width:0;border-left:1px dashed #36c;z-index:1}
            .seg{top:0;height:16px;min-width:3px}
            .starting{background:#bbb}.serving{background:#3a3}.withdrawn{background:#e9b400}
            .deleted{background:#f80}.sigterm{background:#c33}
            .request{height:4px;min-width:2px;background:#275}
            .request.cut{background:#c00}
            .cross{top:1px;color:#c00}.centred{transform:translateX(-50%%)}
            </style></head><body>
            """.formatted(STEP_LINES * 13 + 4);

    private static final String KEY = """
            <p class="key">Each replica's lane:<i class="starting"></i>starting<i class="serving"></i>serving\
            <i class="withdrawn"></i>withdrawn, the operator reading its engine<i class="deleted"></i>deleted, preStop hook running\
            <i class="sigterm"></i>SIGTERM until the Pod is gone. Below it, its requests:<i class="request"></i>completed\
            <i class="request cut"></i>cut, <b style="color:#c00">&#x2715;</b> where. Dashed: a step of the run.</p>
            """;

    static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }
}
