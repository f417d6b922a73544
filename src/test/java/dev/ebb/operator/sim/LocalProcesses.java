package dev.ebb.operator.sim;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Starts the processes the test world runs in place of a container's: the argv exactly as rendered, with its
 * program looked up the way the container would, on a PATH that starts with the distribution's /usr/bin.
 * Engine images ship a distribution's interpreter; a version manager's shim (pyenv) found first on this
 * machine's PATH starts several times slower and takes a lock, so fifty reads at once would queue behind it.
 * (The JVM resolves a bare program name on its own PATH, not on the child's, so the lookup is done here.)
 */
public final class LocalProcesses {
    private static final List<Path> CONTAINER_PATH = containerPath();

    private LocalProcesses() {}

    public static ProcessBuilder builder(List<String> argv) {
        List<String> command = new ArrayList<>(argv);
        if (!command.isEmpty() && !command.get(0).contains("/")) {
            String program = command.get(0);
            CONTAINER_PATH.stream()
                    .map(dir -> dir.resolve(program))
                    .filter(Files::isExecutable)
                    .findFirst()
                    .ifPresent(found -> command.set(0, found.toString()));
        }
        return new ProcessBuilder(command);
    }

    private static List<Path> containerPath() {
        String path = System.getenv().getOrDefault("PATH", "");
        return Stream.concat(
                        Stream.of(Path.of("/usr/bin")),
                        Stream.of(path.split(File.pathSeparator))
                                .filter(s -> !s.isEmpty())
                                .map(Path::of))
                .toList();
    }
}
