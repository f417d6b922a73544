package dev.ebb.operator.read;

import dev.ebb.operator.drain.InFlightGauges;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Reads a Prometheus text exposition into a {@link Reading} for a list of gauges: every series of each gauge is
 * summed, whatever its labels; and, for a router's page, one metric's series by a label. Every line must be blank, a
 * comment or a sample: a line that is none of these (a cut, framing bytes of a transfer, anything unforeseen) makes
 * the whole page unreadable, since the sample it hides may be the one that matters. Pure, and it never throws: a body
 * it cannot trust is a {@code Failed} reading or nothing.
 */
public final class PrometheusText {
    private PrometheusText() {}

    public static Reading read(String body, List<InFlightGauges.Gauge> gauges) {
        try {
            return parse(body, gauges);
        } catch (RuntimeException e) {
            return new Reading.Failed("unreadable metrics: " + e.getClass().getSimpleName());
        }
    }

    private static Reading parse(String body, List<InFlightGauges.Gauge> gauges) {
        if (body == null) {
            return new Reading.Failed("no body");
        }
        Page page = Page.of(body);
        if (page.unreadableLine > 0) {
            return new Reading.Failed("line " + page.unreadableLine + " is neither a comment nor a sample");
        }
        if (page.samples.isEmpty()) {
            return new Reading.Failed("the body holds no metrics");
        }
        Set<String> wanted = gauges.stream().flatMap(g -> g.names().stream()).collect(Collectors.toSet());
        Map<String, Double> sums = new LinkedHashMap<>();
        for (Sample sample : page.samples) {
            if (!wanted.contains(sample.name)) {
                continue;
            }
            if (Double.isNaN(sample.value) || Double.isInfinite(sample.value) || sample.value < 0) {
                return new Reading.Failed(sample.name + " has value " + sample.value + ", which is no count");
            }
            sums.merge(sample.name, sample.value, Double::sum);
        }
        List<String> missing = new ArrayList<>();
        for (InFlightGauges.Gauge gauge : gauges) {
            if (gauge.names().stream().noneMatch(sums::containsKey)) {
                missing.add(gauge.toString());
            }
        }
        if (!missing.isEmpty()) {
            return new Reading.Partial(List.copyOf(missing));
        }
        double total = sums.values().stream().mapToDouble(Double::doubleValue).sum();
        return total == 0 ? new Reading.Idle() : new Reading.Busy(total);
    }

    /**
     * For one metric, the sum of its series grouped by the value of one label, whatever the values (a NaN series is
     * still a series); series without that label are left out. Empty when the body is not a metrics page at all or
     * has a line that cannot be read. Never throws.
     */
    public static Optional<Map<String, Double>> byLabel(String body, String metric, String label) {
        try {
            if (body == null) {
                return Optional.empty();
            }
            Page page = Page.of(body);
            if (page.unreadableLine > 0 || page.samples.isEmpty()) {
                return Optional.empty();
            }
            Map<String, Double> sums = new LinkedHashMap<>();
            for (Sample sample : page.samples) {
                String value = sample.name.equals(metric) ? sample.labels.get(label) : null;
                if (value != null) {
                    sums.merge(value, sample.value, Double::sum);
                }
            }
            return Optional.of(sums);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * The sum of every series of the given counters (sample names, {@code _total} included), or empty when the body
     * cannot be read, lacks one of them, or has a value no counter can hold. Never throws.
     */
    public static Optional<Double> total(String body, List<String> counters) {
        try {
            if (body == null || counters.isEmpty()) {
                return Optional.empty();
            }
            Page page = Page.of(body);
            if (page.unreadableLine > 0) {
                return Optional.empty();
            }
            Set<String> seen = new HashSet<>();
            double total = 0;
            for (Sample sample : page.samples) {
                if (!counters.contains(sample.name)) {
                    continue;
                }
                if (Double.isNaN(sample.value) || Double.isInfinite(sample.value) || sample.value < 0) {
                    return Optional.empty();
                }
                seen.add(sample.name);
                total += sample.value;
            }
            return seen.size() == Set.copyOf(counters).size() ? Optional.of(total) : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * The names of the metrics the body has samples of; empty for a body that is no metrics page or has a line that
     * cannot be read.
     */
    public static Set<String> names(String body) {
        if (body == null) {
            return Set.of();
        }
        Page page = Page.of(body);
        if (page.unreadableLine > 0) {
            return Set.of();
        }
        Set<String> names = new HashSet<>();
        page.samples.forEach(sample -> names.add(sample.name));
        return names;
    }

    /** The samples of a page, or the number (from 1) of its first line that is neither blank, a comment nor a sample. */
    private record Page(List<Sample> samples, int unreadableLine) {
        /** Windows line ends and surrounding blanks are tolerated. */
        static Page of(String body) {
            List<Sample> samples = new ArrayList<>();
            List<String> lines = body.lines().toList();
            for (int n = 0; n < lines.size(); n++) {
                String line = lines.get(n).strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                Sample sample = Sample.parse(line);
                if (sample == null) {
                    return new Page(List.of(), n + 1);
                }
                samples.add(sample);
            }
            return new Page(samples, 0);
        }
    }

    private static boolean isNameStart(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':';
    }

    private static boolean isNameChar(char c) {
        return isNameStart(c) || c >= '0' && c <= '9';
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }

    /** One sample line: a metric name, optional labels, a value, an optional timestamp. */
    private record Sample(String name, Map<String, String> labels, double value) {
        /** The sample, or null when the line is not one. */
        static Sample parse(String line) {
            if (line.isEmpty() || !isNameStart(line.charAt(0))) {
                return null;
            }
            int i = 1;
            while (i < line.length() && isNameChar(line.charAt(i))) {
                i++;
            }
            String name = line.substring(0, i);
            Map<String, String> labels = new HashMap<>();
            if (i < line.length() && line.charAt(i) == '{') {
                i = readLabels(line, i + 1, labels);
                if (i < 0) {
                    return null;
                }
            }
            if (i == line.length() || !isBlank(line.charAt(i))) {
                return null;
            }
            String[] rest = line.substring(i).strip().split("[ \t]+");
            if (rest.length > 2) {
                return null;
            }
            Double value = number(rest[0]);
            if (value == null || rest.length == 2 && number(rest[1]) == null) {
                return null;
            }
            return new Sample(name, labels, value);
        }

        /**
         * Reads {@code name="value"} pairs, comma-separated (a trailing comma allowed), up to the closing brace, into
         * labels; returns the index just past the brace, or -1 when the text is not such a list.
         */
        private static int readLabels(String line, int from, Map<String, String> labels) {
            int i = skipBlanks(line, from);
            while (i < line.length() && line.charAt(i) != '}') {
                int nameStart = i;
                if (!isNameStart(line.charAt(i)) || line.charAt(i) == ':') {
                    return -1;
                }
                while (i < line.length() && isNameChar(line.charAt(i)) && line.charAt(i) != ':') {
                    i++;
                }
                String key = line.substring(nameStart, i);
                i = skipBlanks(line, i);
                if (i >= line.length() || line.charAt(i) != '=') {
                    return -1;
                }
                i = skipBlanks(line, i + 1);
                if (i >= line.length() || line.charAt(i) != '"') {
                    return -1;
                }
                StringBuilder value = new StringBuilder();
                for (i++; i < line.length() && line.charAt(i) != '"'; i++) {
                    char c = line.charAt(i);
                    if (c == '\\') {
                        if (++i == line.length()) {
                            return -1;
                        }
                        switch (line.charAt(i)) {
                            case '\\' -> value.append('\\');
                            case '"' -> value.append('"');
                            case 'n' -> value.append('\n');
                            default -> {
                                return -1;
                            }
                        }
                    } else {
                        value.append(c);
                    }
                }
                if (i >= line.length()) {
                    return -1;
                }
                labels.put(key, value.toString());
                i = skipBlanks(line, i + 1);
                if (i < line.length() && line.charAt(i) == ',') {
                    i = skipBlanks(line, i + 1);
                } else if (i < line.length() && line.charAt(i) != '}') {
                    return -1;
                }
            }
            return i < line.length() ? i + 1 : -1;
        }

        private static int skipBlanks(String line, int from) {
            int i = from;
            while (i < line.length() && isBlank(line.charAt(i))) {
                i++;
            }
            return i;
        }

        private static Double number(String text) {
            switch (text) {
                case "NaN":
                    return Double.NaN;
                case "+Inf":
                case "Inf":
                    return Double.POSITIVE_INFINITY;
                case "-Inf":
                    return Double.NEGATIVE_INFINITY;
                default:
                    if (text.isEmpty()
                            || !text.chars()
                                    .allMatch(c -> c >= '0' && c <= '9'
                                            || c == '.'
                                            || c == 'e'
                                            || c == 'E'
                                            || c == '+'
                                            || c == '-')) {
                        return null;
                    }
                    try {
                        return Double.parseDouble(text);
                    } catch (NumberFormatException e) {
                        return null;
                    }
            }
        }
    }
}
