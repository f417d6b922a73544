package dev.ebb.operator.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Starts the processes the test world runs in place of a container's: the argv exactly as rendered, with the
 * directory of an engine-like python3 first on PATH. Engine images ship a distribution's optimised interpreter;
 * a version manager's shim (pyenv) or its local build starts several times slower, and the drain timings and
 * read bounds would measure that instead of the scripts. The distribution's /usr/bin/python3 is preferred.
 */
public final class LocalProcesses {
    private static final Path DISTRIBUTION_PYTHON = Path.of("/usr/bin/python3");
    private static final String PYTHON_DIR = realPythonDirectory();

    private LocalProcesses() {
    }

    public static ProcessBuilder builder(List<String> argv) {
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().merge("PATH", PYTHON_DIR, (path, dir) -> dir + ":" + path);
        return builder;
    }

    private static String realPythonDirectory() {
        if (Files.isExecutable(DISTRIBUTION_PYTHON)) {
            return DISTRIBUTION_PYTHON.getParent().toString();
        }
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
