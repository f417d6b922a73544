package dev.ebb.operator.sandbox;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code make run} without a cluster: the whole story in the test world. A vLLM role of 4 replicas behind a router
 * under streaming load is scaled to 2 and then loses one more Pod to a hand delete, first with Ebb and then with
 * naive deletion; prints what happened to each replica and what each cost, and writes the same as an HTML page.
 */
public final class Sandbox {
    public static final Path PAGE = Path.of("target", "sandbox", "timeline.html");

    private Sandbox() {
    }

    public static void main(String[] args) throws Exception {
        Scenario.quietLogs();
        PrintStream out = System.out;
        Choreography choreography = Choreography.sandbox();
        out.printf(Locale.ROOT, "Ebb sandbox: no cluster, the test world instead (API server, kubelet, endpoints, router and engines%n"
                + "in this process; clients stream through the router's client entry). %s, %s.%n%n", choreography.title(), choreography.load());
        Run ebb = Scenario.play(Removal.EBB, choreography, Sandbox::progress);
        clearProgress();
        out.println(Report.timeline(ebb));
        Run naive = Scenario.play(Removal.NAIVE, choreography, Sandbox::progress);
        clearProgress();
        out.println(Report.timeline(naive));
        out.println("Requests, the same choreography and load:");
        out.println(Report.table(List.of(ebb, naive)));
        write(Report.html(List.of(ebb, naive)));
        out.println("Timeline page: " + PAGE.toAbsolutePath());
        System.exit(0);
    }

    private static void progress(String line) {
        System.err.print("\r" + line + "   ");
        System.err.flush();
    }

    private static void clearProgress() {
        System.err.print("\r" + " ".repeat(100) + "\r");
        System.err.flush();
    }

    private static void write(String html) throws IOException {
        Files.createDirectories(PAGE.getParent());
        Files.writeString(PAGE, html);
    }
}
