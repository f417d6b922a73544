package dev.ebb.operator.sim;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The test world's fake engine as a program of its own, for the real node's containers: the node image runs it in
 * place of {@code vllm serve} and {@code python3 -m sglang.launch_server}, with the command line the operator rendered.
 * It listens where that command line says (the rendered {@code --host 0.0.0.0} is every address of the Pod's network
 * namespace) and meets SIGTERM as its image's release would: the JVM's shutdown hook asks the engine to stop and holds
 * the process until it has, so a draining engine exits only once its streams have ended.
 *
 * <p>Usage: {@code EngineProgram <image> <engine command ...>}, e.g. {@code EngineProgram vllm/vllm-openai:v0.32.0
 * vllm serve m --host 0.0.0.0 --port 8000}.
 */
public final class EngineProgram {
    /** How the termination message begins, followed by the instant SIGTERM came. */
    public static final String SIGTERM_AT = "SIGTERM at ";

    private static final int USAGE = 2;

    private EngineProgram() {}

    public static void main(String[] args) throws Exception {
        List<String> command = args.length < 2 ? List.of() : Arrays.asList(args).subList(1, args.length);
        Engine engine = CommandedEngine.engineOf(command).orElse(null);
        if (engine == null) {
            System.err.println("EngineProgram: not an engine's command line: " + command);
            System.exit(USAGE);
        }
        FakeEngine running = CommandedEngine.start(engine, args[0], command, 8000, "0.0.0.0", behaviour -> {});
        System.err.println("EngineProgram: " + engine.name().toLowerCase(Locale.ROOT) + " serving as " + args[0]);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            recordSigterm(Instant.now());
                            running.sigterm();
                            while (!running.exited()) {
                                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                            }
                            System.err.println("EngineProgram: exited");
                            stopped.countDown();
                        },
                        "sigterm"));
        stopped.await();
    }

    /**
     * Writes when SIGTERM came into the container's termination message (the kubelet's default
     * terminationMessagePath), which the kubelet copies into the container's terminated state, so that a test can
     * tell when the kubelet signalled, after the preStop hook, once the Pod is gone. Outside a container there is no
     * such file, and nothing is written.
     */
    private static void recordSigterm(Instant at) {
        Path message = Path.of("/dev/termination-log");
        if (Files.isWritable(message)) {
            try {
                // appended: the drain hook has written how it ended there already
                Files.writeString(message, SIGTERM_AT + at + "\n", StandardOpenOption.APPEND);
            } catch (IOException e) {
                System.err.println("EngineProgram: the termination message could not be written: " + e.getMessage());
            }
        }
    }
}
