package dev.ebb.operator.bench;

import java.util.List;
import java.util.Locale;

/** The benchmarks' table: a label, then the minimum, median and maximum of what was measured. */
final class Columns {
    private Columns() {}

    static void header() {
        System.out.printf(Locale.ROOT, "  %-40s %8s %8s %8s%n", "", "min", "median", "max");
    }

    static void row(String label, List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        System.out.printf(
                Locale.ROOT,
                "  %-40s %8.2f %8.2f %8.2f%n",
                label,
                sorted.get(0),
                median(sorted),
                sorted.get(sorted.size() - 1));
    }

    /** The table for figures the design bounds from below: the floor beside them, and how far the median sits above it. */
    static void headerAboveFloor() {
        System.out.printf(
                Locale.ROOT, "  %-40s %8s %8s %8s %8s %13s%n", "", "min", "median", "max", "floor", "median-floor");
    }

    static void rowAboveFloor(String label, List<Double> values, double floor) {
        List<Double> sorted = values.stream().sorted().toList();
        double median = median(sorted);
        System.out.printf(
                Locale.ROOT,
                "  %-40s %8.2f %8.2f %8.2f %8.2f %13.2f%n",
                label,
                sorted.get(0),
                median,
                sorted.get(sorted.size() - 1),
                floor,
                median - floor);
    }

    /** A figure measured once: its own line, with no spread to show. */
    static void line(String label, String value) {
        System.out.printf(Locale.ROOT, "  %-40s %s%n", label, value);
    }

    static double median(List<Double> sorted) {
        return sorted.size() % 2 == 1
                ? sorted.get(sorted.size() / 2)
                : (sorted.get(sorted.size() / 2 - 1) + sorted.get(sorted.size() / 2)) / 2;
    }
}
