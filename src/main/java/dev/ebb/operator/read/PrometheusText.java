package dev.ebb.operator.read;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a Prometheus text exposition into a {@link Reading} for a list of gauges: every series of each gauge is
 * summed, whatever its labels; and, for a router's page, one metric's series by a label. Pure, and it never throws:
 * a body it cannot trust is a {@code Failed} reading or nothing.
 */
public final class PrometheusText {
    private PrometheusText() {
    }

    public static Reading read(String body, List<String> gauges) {
        try {
            return parse(body, gauges);
        } catch (RuntimeException e) {
            return new Reading.Failed("unreadable metrics: " + e.getClass().getSimpleName());
        }
    }

    private static Reading parse(String body, List<String> gauges) {
        if (body == null) {
            return new Reading.Failed("no body");
        }
        Set<String> wanted = Set.copyOf(gauges);
        Map<String, Double> sums = new LinkedHashMap<>();
        int samples = 0;
        for (String line : sampleLines(body)) {
            Sample sample = Sample.parse(line);
            if (sample == null) {
                String name = leadingName(line);
                if (wanted.contains(name)) {
                    return new Reading.Failed("malformed sample of " + name);
                }
                continue;
            }
            samples++;
            if (!wanted.contains(sample.name)) {
                continue;
            }
            if (Double.isNaN(sample.value) || Double.isInfinite(sample.value) || sample.value < 0) {
                return new Reading.Failed(sample.name + " has value " + sample.value + ", which is no count");
            }
            sums.merge(sample.name, sample.value, Double::sum);
        }
        if (samples == 0) {
            return new Reading.Failed("the body holds no metrics");
        }
        List<String> missing = new ArrayList<>();
        for (String gauge : gauges) {
            if (!sums.containsKey(gauge)) {
                missing.add(gauge);
            }
        }
        if (!missing.isEmpty()) {
            return new Reading.Partial(List.copyOf(missing));
        }
        double total = sums.values().stream().mapToDouble(Double::doubleValue).sum();
        return total == 0 ? new Reading.Idle() : new Reading.Busy(total);
    }

    /**
     * For one metric, the sum of its series grouped by the value of one label; series without that label are left
     * out. Empty when the body is not a metrics page at all. Never throws.
     */
    public static Optional<Map<String, Double>> byLabel(String body, String metric, String label) {
        try {
            if (body == null) {
                return Optional.empty();
            }
            Map<String, Double> sums = new LinkedHashMap<>();
            int samples = 0;
            for (String line : sampleLines(body)) {
                Sample sample = Sample.parse(line);
                if (sample == null) {
                    continue;
                }
                samples++;
                String value = sample.name.equals(metric) ? labelValue(sample.labels, label) : null;
                if (value != null && !Double.isNaN(sample.value)) {
                    sums.merge(value, sample.value, Double::sum);
                }
            }
            return samples == 0 ? Optional.empty() : Optional.of(sums);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The names of the metrics the body has well-formed samples of; empty for a body that is no metrics page. */
    public static Set<String> names(String body) {
        if (body == null) {
            return Set.of();
        }
        Set<String> names = new HashSet<>();
        for (String line : sampleLines(body)) {
            Sample sample = Sample.parse(line);
            if (sample != null) {
                names.add(sample.name);
            }
        }
        return names;
    }

    /** The lines that may hold a sample: not blank, not a HELP or TYPE comment; Windows line ends tolerated. */
    private static List<String> sampleLines(String body) {
        return body.lines().map(String::strip).filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
    }

    /** The unescaped value of one label in the text between a sample's braces, or null. */
    static String labelValue(String labels, String wanted) {
        int i = 0;
        while (i < labels.length()) {
            while (i < labels.length() && (labels.charAt(i) == ',' || labels.charAt(i) == ' ')) {
                i++;
            }
            int eq = labels.indexOf('=', i);
            if (eq < 0 || eq + 1 >= labels.length() || labels.charAt(eq + 1) != '"') {
                return null;
            }
            String key = labels.substring(i, eq).trim();
            StringBuilder value = new StringBuilder();
            int j = eq + 2;
            for (; j < labels.length() && labels.charAt(j) != '"'; j++) {
                char c = labels.charAt(j);
                if (c == '\\' && j + 1 < labels.length()) {
                    char next = labels.charAt(++j);
                    value.append(next == 'n' ? '\n' : next);
                } else {
                    value.append(c);
                }
            }
            if (key.equals(wanted)) {
                return value.toString();
            }
            i = j + 1;
        }
        return null;
    }

    private static String leadingName(String line) {
        int end = 0;
        while (end < line.length() && isNameChar(line.charAt(end))) {
            end++;
        }
        return line.substring(0, end);
    }

    static boolean isNameChar(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ':';
    }

    /** One sample line: a metric name, optional labels, a value, an optional timestamp. */
    private record Sample(String name, String labels, double value) {
        static Sample parse(String line) {
            int i = 0;
            while (i < line.length() && isNameChar(line.charAt(i))) {
                i++;
            }
            if (i == 0) {
                return null;
            }
            String name = line.substring(0, i);
            String labels = "";
            if (i < line.length() && line.charAt(i) == '{') {
                int open = i;
                i = endOfLabels(line, i + 1);
                if (i < 0) {
                    return null;
                }
                labels = line.substring(open + 1, i - 1);
            }
            String[] rest = line.substring(i).trim().split("[ \t]+");
            if (rest.length < 1 || rest.length > 2 || rest[0].isEmpty()) {
                return null;
            }
            Double value = number(rest[0]);
            if (value == null || rest.length == 2 && number(rest[1]) == null) {
                return null;
            }
            return new Sample(name, labels, value);
        }

        /** Index just past the closing brace, honouring quoted values with escapes; -1 when it never closes. */
        private static int endOfLabels(String line, int from) {
            boolean quoted = false;
            for (int i = from; i < line.length(); i++) {
                char c = line.charAt(i);
                if (quoted && c == '\\') {
                    i++;
                } else if (c == '"') {
                    quoted = !quoted;
                } else if (c == '}' && !quoted) {
                    return i + 1;
                }
            }
            return -1;
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
                    if (!text.chars().allMatch(c -> c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
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
