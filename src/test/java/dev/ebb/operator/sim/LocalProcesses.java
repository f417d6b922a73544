package dev.ebb.operator.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Starts the processes the test world runs in place of a container's: the argv exactly as rendered, with the
 * directory of the machine's real python3 first on PATH. Version-manager shims (pyenv) put a shell script in
 * front of the interpreter that costs hundreds of milliseconds per start under load, which an engine image's
 * python3 does not; the drain timings would measure the shim instead of the hook.
 */
public final class LocalProcesses {
    private static final String PYTHON_DIR = realPythonDirectory();

    private LocalProcesses() {
    }

    public static ProcessBuilder builder(List<String> argv) {
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().merge("PATH", PYTHON_DIR, (path, dir) -> dir + ":" + path);
        return builder;
    }

    private static String realPythonDirectory() {
        try {
            Process p = new ProcessBuilder("python3", "-c",
                    "import os, sys; print(os.path.dirname(os.path.realpath(sys.executable)))").start();
            String dir = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (p.waitFor() != 0 || dir.isEmpty()) {
                throw new IllegalStateException("python3 is needed by the test world and did not start");
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("python3 is needed by the test world", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
