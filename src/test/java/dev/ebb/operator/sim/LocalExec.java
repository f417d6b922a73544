package dev.ebb.operator.sim;

import dev.ebb.operator.read.ExecCommand;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.ExecResult;
import dev.ebb.operator.read.PodExec;
import io.fabric8.kubernetes.api.model.Pod;
import io.smallrye.mutiny.Uni;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The test world's pods/exec: runs the requested argv as a local process against the Pod's fake engine, with the
 * rendered loopback host swapped for the Pod's own address and nothing else changed. Faults can be switched on.
 */
public final class LocalExec implements PodExec, AutoCloseable {
    private final ExecutorService processes = Executors.newCachedThreadPool(DaemonThreads.named("local-exec"));
    private volatile String failure;
    private volatile boolean hang;
    private volatile int extraOutputBytes;

    /** Every exec fails as if the API server refused it, with this reason; null to stop. */
    public LocalExec failWith(String why) {
        failure = why;
        return this;
    }
    /** Every exec connects and then never answers. */
    public LocalExec hang(boolean value) {
        hang = value;
        return this;
    }
    /** Every exec prints this many bytes more than the command itself would. */
    public LocalExec extraOutput(int bytes) {
        extraOutputBytes = bytes;
        return this;
    }

    @Override
    public Uni<ExecResult> exec(Pod pod, String container, ExecCommand command, ExecLimits limits) {
        return exec(pod, command.argv(), new ByteArrayInputStream(command.stdin()), limits);
    }

    /**
     * Runs {@code argv} with {@code stdin} copied to the process as it arrives; like a container's, the process's stdin
     * stays open until the stream ends.
     */
    public Uni<ExecResult> exec(Pod pod, List<String> argv, InputStream stdin, ExecLimits limits) {
        return Uni.createFrom().emitter(emitter -> {
            AtomicReference<Process> running = new AtomicReference<>();
            CompletableFuture<?> task = CompletableFuture.runAsync(
                    () -> emitter.complete(run(pod, argv, stdin, limits, running)), processes);
            emitter.onTermination(() -> {
                task.cancel(true);
                Process p = running.get();
                if (p != null) {
                    p.destroyForcibly();
                }
            });
        });
    }

    private ExecResult run(
            Pod pod, List<String> argv, InputStream stdin, ExecLimits limits, AtomicReference<Process> running) {
        if (failure != null) {
            return new ExecResult.Failed(failure);
        }
        String address = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
        if (address == null) {
            return new ExecResult.Failed("pod " + pod.getMetadata().getName() + " has no address");
        }
        List<String> command = hang ? List.of("sleep", "3600") : PodAddressing.onPodAddress(argv, address);
        long deadline = System.nanoTime() + limits.deadline().toNanos();
        try {
            Process process = LocalProcesses.builder(command)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            running.set(process);
            CompletableFuture.runAsync(() -> copy(stdin, process), processes);
            CompletableFuture<byte[]> stdout = CompletableFuture.supplyAsync(
                    () -> readCapped(process.getInputStream(), limits.maxStdoutBytes() + 1), processes);
            byte[] out = stdout.get(remaining(deadline), TimeUnit.NANOSECONDS);
            if (out.length + extraOutputBytes > limits.maxStdoutBytes()) {
                process.destroyForcibly();
                return new ExecResult.Overflowed(limits.maxStdoutBytes());
            }
            if (!process.waitFor(remaining(deadline), TimeUnit.NANOSECONDS)) {
                process.destroyForcibly();
                return new ExecResult.TimedOut(limits.deadline());
            }
            return new ExecResult.Exited(process.exitValue(), out);
        } catch (IOException e) {
            return new ExecResult.Failed("exec failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new ExecResult.Failed("cancelled");
        } catch (ExecutionException e) {
            return new ExecResult.Failed("reading output failed: " + e.getCause());
        } catch (TimeoutException e) {
            running.get().destroyForcibly();
            return new ExecResult.TimedOut(limits.deadline());
        }
    }

    /** Feeds the process its stdin as it arrives; a process that stops reading ends the copy. */
    private static void copy(InputStream stdin, Process process) {
        try (OutputStream in = process.getOutputStream()) {
            byte[] buffer = new byte[8192];
            for (int n = stdin.read(buffer); n >= 0; n = stdin.read(buffer)) {
                in.write(buffer, 0, n);
                // the process's stdin is buffered, and a command may wait for what is already here
                in.flush();
            }
        } catch (IOException stopped) {
            // the process exited or was destroyed: nothing more is wanted
        }
    }

    /** Reads at most {@code cap} bytes, then stops reading, which is what stops a runaway command's output. */
    private static byte[] readCapped(InputStream in, int cap) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            int n;
            while (out.size() < cap && (n = in.read(buffer, 0, Math.min(buffer.length, cap - out.size()))) > 0) {
                out.write(buffer, 0, n);
            }
        } catch (IOException e) {
            // the process was destroyed: what was read so far is all there is
        }
        return out.toByteArray();
    }

    private static long remaining(long deadlineNanos) {
        return Math.max(0, deadlineNanos - System.nanoTime());
    }

    @Override
    public void close() {
        processes.shutdownNow();
    }
}
