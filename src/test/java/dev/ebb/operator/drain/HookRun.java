package dev.ebb.operator.drain;

import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.PodAddressing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One run of the real drain hook under python3, as the kubelet would start it, with what it printed. */
public record HookRun(Duration took, int exitCode, List<String> lines) {
    private static final Pattern READ_AT = Pattern.compile("^t=([0-9.]+)s read");

    public static HookRun run(List<String> argv, String podAddress) throws IOException, InterruptedException {
        return run(argv, podAddress, Map.of());
    }

    /** @param environment added to the interpreter's environment */
    public static HookRun run(List<String> argv, String podAddress, Map<String, String> environment)
            throws IOException, InterruptedException {
        // stderr goes to a file, not a pipe: a pipe's end can leak into a process spawned at the same moment by
        // another test, and then its end of file waits for that process too
        Path log = Files.createTempFile("drain-hook", ".log");
        ProcessBuilder builder = LocalProcesses.builder(PodAddressing.onPodAddress(argv, podAddress))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(log.toFile());
        builder.environment().putAll(environment);
        long start = System.nanoTime();
        int code = builder.start().waitFor();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        Files.delete(log);
        return new HookRun(took, code, lines);
    }

    /** When each read started, in seconds from the hook's start, as the hook logged it. */
    List<Double> readStarts() {
        return lines.stream()
                .map(READ_AT::matcher)
                .filter(Matcher::find)
                .map(m -> Double.parseDouble(m.group(1)))
                .toList();
    }

    private static final Pattern RETURNED_AT = Pattern.compile("^returning at ([0-9.]+)s");

    /** When the hook returned by its own clock, which starts once the interpreter runs. */
    public double returnedAt() {
        Matcher m = RETURNED_AT.matcher(last());
        if (!m.find()) {
            throw new AssertionError("the hook's last line does not say when it returned: " + last());
        }
        return Double.parseDouble(m.group(1));
    }

    String last() {
        return lines.get(lines.size() - 1);
    }

    public double seconds() {
        return took.toMillis() / 1000.0;
    }
}
