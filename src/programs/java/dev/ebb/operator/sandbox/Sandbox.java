package dev.ebb.operator.sandbox;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * {@code make run} without a cluster: the whole story in the test world. A vLLM role of 4 replicas behind a router is
 * scaled to 2 under streaming load, played three ways at once on the same requests: with Ebb, with the preStop sleep
 * that graceful scale-down guides give, and with plain deletion. Prints a one-line verdict and a table that says what
 * each figure counts, and writes the same, with a chart per run, as an HTML page.
 */
public final class Sandbox {
    public static final Path PAGE = Path.of("target", "sandbox", "timeline.html");
    public static final Path TEXT = Path.of("target", "sandbox", "timeline.txt");
    static final List<Removal> ARMS = List.of(Removal.EBB, Removal.HOOK_ONLY, Removal.NAIVE);

    private Sandbox() {}

    public static void main(String[] args) throws Exception {
        Scenario.quietLogs();
        PrintStream out = System.out;
        Choreography choreography = Choreography.sandbox();
        out.printf(
                Locale.ROOT,
                "Ebb sandbox: no cluster needed. The API server, kubelet, router and vLLM engines are simulated in this process.%n");
        out.printf(
                Locale.ROOT,
                "%s: %s, %s; grace %d s.%n",
                choreography.title(),
                choreography.load(),
                choreography.path().description(),
                choreography.grace());
        out.printf(Locale.ROOT, "Played three ways at once, on the same requests (about 2 minutes):%n");
        ARMS.forEach(r -> out.printf(Locale.ROOT, "  %-10s %s%n", r.label(), r.description()));
        out.println();
        Progress progress = System.console() != null ? new Progress() : null;
        List<Run> runs = playAtOnce(choreography, progress);
        if (progress != null) {
            progress.clear();
        }
        out.println(Report.verdict(runs));
        out.println();
        out.print(Report.summary(runs));
        out.println();
        write(PAGE, Page.html(runs));
        write(TEXT, runs.stream().map(Report::timeline).collect(Collectors.joining(System.lineSeparator())));
        out.println("Each run, replica by replica, on a time axis: " + PAGE.toAbsolutePath());
        out.println("The same as text, with every read of the engines: " + TEXT.toAbsolutePath());
        System.exit(0);
    }

    /** Every arm in a test world of its own, side by side: their generations are wall-clock time and the worlds mostly wait. */
    static List<Run> playAtOnce(Choreography choreography, Progress progress) throws Exception {
        ExecutorService arms = Executors.newFixedThreadPool(ARMS.size());
        try {
            List<Future<Run>> played = new ArrayList<>();
            for (Removal removal : ARMS) {
                Consumer<String> report = progress == null ? line -> {} : line -> progress.update(removal, line);
                played.add(arms.submit(() -> Scenario.play(removal, choreography, report)));
            }
            List<Run> runs = new ArrayList<>();
            for (Future<Run> run : played) {
                runs.add(run.get());
            }
            return runs;
        } finally {
            arms.shutdownNow();
        }
    }

    /** One line on the terminal, redrawn in place, with where each arm is; never written when the output goes to a file. */
    static final class Progress {
        private final Map<Removal, String> lines = new ConcurrentHashMap<>();
        private int drawn;

        synchronized void update(Removal removal, String line) {
            lines.put(removal, line);
            String all =
                    ARMS.stream().filter(lines::containsKey).map(lines::get).collect(Collectors.joining("  |  "));
            System.err.print("\r" + all + " ".repeat(Math.max(0, drawn - all.length())));
            System.err.flush();
            drawn = all.length();
        }

        synchronized void clear() {
            System.err.print("\r" + " ".repeat(drawn) + "\r");
            System.err.flush();
        }
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }
}
