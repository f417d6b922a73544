package dev.ebb.operator.sim;

import dev.ebb.operator.drain.DrainHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * The files a container has that a process on this machine must not touch: its main process's stderr
 * ({@code /proc/1/fd/2} here is this machine's init) and its termination message file. A hook's argument naming one
 * names a file of its own here instead; the termination message is read back as the kubelet reads it, its last 4096
 * bytes (pkg/kubelet/kuberuntime/kuberuntime_container.go, tail.ReadAtMost with MaxContainerTerminationMessageLength,
 * Kubernetes v1.37.2).
 */
final class ContainerFiles implements AutoCloseable {
    private static final int MAX_MESSAGE = 4096;
    private final Path containerLog;
    private final Path terminationLog;

    private ContainerFiles(Path containerLog, Path terminationLog) {
        this.containerLog = containerLog;
        this.terminationLog = terminationLog;
    }

    static ContainerFiles create() throws IOException {
        return new ContainerFiles(
                Files.createTempFile("container-log", ".log"), Files.createTempFile("termination-log", ".log"));
    }

    List<String> onHost(List<String> argv) {
        return argv.stream()
                .map(arg -> arg.equals(DrainHook.CONTAINER_LOG)
                        ? containerLog.toString()
                        : arg.equals(DrainHook.TERMINATION_LOG) ? terminationLog.toString() : arg)
                .toList();
    }

    /** The termination message, null when the file is empty, as the kubelet leaves it unset. */
    String terminationMessage() throws IOException {
        byte[] all = Files.readAllBytes(terminationLog);
        byte[] tail = Arrays.copyOfRange(all, Math.max(0, all.length - MAX_MESSAGE), all.length);
        return tail.length == 0 ? null : new String(tail, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        Files.deleteIfExists(containerLog);
        Files.deleteIfExists(terminationLog);
    }
}
