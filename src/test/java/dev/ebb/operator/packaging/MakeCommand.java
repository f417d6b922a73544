package dev.ebb.operator.packaging;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** `make` run in the project as a user runs it, with the environment given; its output and exit code. */
public record MakeCommand(int exitCode, String output) {
    private static final Duration LIMIT = Duration.ofMinutes(2);

    /** @param env set in the command's environment; a null value removes the variable */
    public static MakeCommand run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("make", "-s", "--no-print-directory"));
        argv.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(argv)
                .directory(Path.of("").toAbsolutePath().toFile())
                .redirectErrorStream(true);
        env.forEach((name, value) -> {
            if (value == null) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(LIMIT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("make " + String.join(" ", args) + " still runs after " + LIMIT);
        }
        return new MakeCommand(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }
}
