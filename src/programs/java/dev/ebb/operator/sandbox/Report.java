package dev.ebb.operator.sandbox;

import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sandbox.Timeline.Mark;
import dev.ebb.operator.sim.LoadGenerator;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/** Runs as a person reads them in text: a verdict, a timeline per replica, and tables side by side ({@link Page} draws them). */
public final class Report {
    private Report() {}

    /** Per replica, in order: what happened when; runs of reads folded into one line. */
    public static String timeline(Run run) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%s — %s (%s)%n",
                run.removal().label(),
                run.choreography().title(),
                run.removal().description()));
        run.marks().stream()
                .filter(m -> m.kind() == Kind.STEP)
                .forEach(m -> out.append(String.format(Locale.ROOT, "  %6.1f s  %s%n", m.at(), m.detail())));
        for (String pod : run.pods()) {
            out.append(String.format(Locale.ROOT, "  %s%n", pod));
            List<Mark> marks = run.marks().stream()
                    .filter(m -> m.pod().equals(pod) && m.kind() != Kind.CUT)
                    .toList();
            for (int i = 0; i < marks.size(); ) {
                Mark first = marks.get(i);
                int j = i;
                while (j + 1 < marks.size()
                        && folded(first.kind())
                        && marks.get(j + 1).kind() == first.kind()) {
                    j++;
                }
                List<Mark> group = marks.subList(i, j + 1);
                String when = group.size() == 1
                        ? String.format(Locale.ROOT, "%6.1f s        ", first.at())
                        : String.format(
                                Locale.ROOT,
                                "%6.1f-%-6.1f s ",
                                first.at(),
                                group.get(group.size() - 1).at());
                out.append(String.format(
                        Locale.ROOT,
                        "    %s %-15s %s%n",
                        when,
                        label(first.kind()),
                        group.size() == 1 ? first.detail() : tally(group)));
                i = j + 1;
            }
            long done = run.requests().stream()
                    .filter(r -> pod.equals(r.pod()) && r.outcome() == LoadGenerator.Outcome.COMPLETED)
                    .count();
            long cut = run.requests().stream()
                    .filter(r -> pod.equals(r.pod()) && r.outcome() == LoadGenerator.Outcome.CUT)
                    .count();
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
        runs.forEach(
                r -> out.append(String.format(Locale.ROOT, "%12s", r.removal().label())));
        out.append(System.lineSeparator());
        COUNTS.forEach(
                (label, value) -> row(out, runs, label, r -> String.format(Locale.ROOT, "%d", value.applyAsLong(r))));
        boolean scaleDown = runs.stream().anyMatch(r -> r.floor().isPresent());
        row(
                out,
                runs,
                scaleDown ? "change to last leaving Pod gone (s)" : "change to last old Pod gone (s)",
                r -> r.wallTime().isPresent()
                        ? String.format(Locale.ROOT, "%.1f", r.wallTime().getAsDouble())
                        : "-");
        if (scaleDown) {
            row(
                    out,
                    runs,
                    "floor (s)",
                    r -> r.floor().isPresent()
                            ? String.format(Locale.ROOT, "%.1f", r.floor().getAsDouble())
                            : "-");
            row(out, runs, "wall time / floor", r -> ratio(r.wallTime(), r.floor()));
            row(
                    out,
                    runs,
                    "floor of the Pods that left (s)",
                    r -> r.floorOfLeaving().isPresent()
                            ? String.format(
                                    Locale.ROOT, "%.1f", r.floorOfLeaving().getAsDouble())
                            : "-");
            row(out, runs, "wall time / floor of the Pods that left", r -> ratio(r.wallTime(), r.floorOfLeaving()));
        }
        row(out, runs, "run took (s)", r -> String.format(Locale.ROOT, "%.1f", r.seconds()));
        return out.toString();
    }

    /** One line: how many requests each run cut, the first run's out of how many it sent. */
    public static String verdict(List<Run> runs) {
        StringBuilder line = new StringBuilder();
        for (Run run : runs) {
            line.append(
                    line.length() == 0
                            ? String.format(
                                    Locale.ROOT,
                                    "%s: %d of %d cut",
                                    run.removal().label(),
                                    run.cut(),
                                    run.requests().size())
                            : String.format(
                                    Locale.ROOT, "; %s: %d", run.removal().label(), run.cut()));
        }
        return line.toString();
    }

    /**
     * The sandbox's rows, each saying in words what it counts, one value per run. A count that is 0 in every run is left
     * out: a newcomer has nothing to learn from it.
     */
    public static Map<String, List<String>> summaryRows(List<Run> runs) {
        Map<String, List<String>> rows = new LinkedHashMap<>();
        int grace = runs.get(0).choreography().grace();
        rows.put("requests that streamed to the end", values(runs, r -> Long.toString(r.completed())));
        rows.put("requests cut mid-stream", values(runs, r -> Long.toString(r.cut())));
        rows.put(
                String.format(Locale.ROOT, "  of them longer than the %d s grace, which no hook can wait out", grace),
                values(runs, r -> Long.toString(r.cutLongerThanGrace())));
        if (runs.stream().anyMatch(r -> r.rejected() > 0)) {
            rows.put("requests that never got to stream", values(runs, r -> Long.toString(r.rejected())));
        }
        if (runs.stream().anyMatch(r -> r.refusals() > 0)) {
            rows.put(
                    "times a request was turned away before streaming and sent again",
                    values(runs, r -> Long.toString(r.refusals())));
        }
        String change = runs.get(0).choreography().steps().isEmpty()
                ? "the change"
                : runs.get(0).choreography().steps().get(0).toString();
        rows.put(
                String.format(Locale.ROOT, "seconds from '%s' until the last Pod to leave was gone", change),
                values(
                        runs,
                        r -> r.wallTime().isPresent()
                                ? String.format(
                                        Locale.ROOT, "%.0f", r.wallTime().getAsDouble())
                                : "-"));
        return rows;
    }

    /** {@link #summaryRows} as a text table, a column per run. */
    public static String summary(List<Run> runs) {
        Map<String, List<String>> rows = summaryRows(runs);
        int width = rows.keySet().stream().mapToInt(String::length).max().orElse(0) + 2;
        int column =
                runs.stream().mapToInt(r -> r.removal().label().length()).max().orElse(0) + 3;
        StringBuilder out = new StringBuilder(" ".repeat(width));
        runs.forEach(r -> out.append(pad(r.removal().label(), column)));
        out.append(System.lineSeparator());
        rows.forEach((label, values) -> {
            out.append(label).append(" ".repeat(width - label.length()));
            values.forEach(v -> out.append(pad(v, column)));
            out.append(System.lineSeparator());
        });
        return out.toString();
    }

    private static String pad(String value, int width) {
        return " ".repeat(Math.max(1, width - value.length())) + value;
    }

    private static List<String> values(List<Run> runs, Function<Run, String> value) {
        return runs.stream().map(value).toList();
    }

    private static String ratio(OptionalDouble of, OptionalDouble to) {
        return of.isPresent() && to.isPresent()
                ? String.format(Locale.ROOT, "%.2f", of.getAsDouble() / to.getAsDouble())
                : "-";
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
        Map<String, Long> counts = reads.stream()
                .map(m -> m.detail().split("[ (]", 2)[0])
                .collect(Collectors.groupingBy(Function.identity(), LinkedHashMap::new, Collectors.counting()));
        return reads.size() + " reads: "
                + counts.entrySet().stream()
                        .map(e -> e.getKey() + " x" + e.getValue())
                        .collect(Collectors.joining(", "))
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
     * A replica's requests on as few rows as keep any two that overlap in time apart: each, by start, on the first row
     * whose last request has ended by then. A request still running at the end (no end) takes its row for good.
     */
    static List<List<LoadGenerator.Request>> rows(List<LoadGenerator.Request> requests) {
        List<List<LoadGenerator.Request>> rows = new ArrayList<>();
        requests.stream()
                .filter(r -> r.start() != null)
                .sorted(Comparator.comparing(LoadGenerator.Request::start))
                .forEach(request -> {
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
}
