package dev.ebb.operator.sim;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.FollowerGauges;
import dev.ebb.operator.retire.ReplicaClassifier;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;

/**
 * The fake engine an engine container's command line asks for, read from that command line alone: the test world's
 * kubelet starts it, and so does {@link EngineProgram} inside a real node's container, which has no Pod to read.
 */
public final class CommandedEngine {
    private CommandedEngine() {}

    /**
     * Recognises the engine from the command line the operator renders. Followers of a multi-Pod replica serve
     * no HTTP, and a take-over command is opaque: neither gets an engine.
     */
    public static Optional<Engine> engineOf(List<String> command) {
        boolean follower = command.contains("--headless")
                || argAfter(command, "--node-rank")
                        .filter(rank -> !rank.equals("0"))
                        .isPresent();
        return follower ? Optional.empty() : ReplicaClassifier.engineOf(command);
    }

    static Optional<String> argAfter(List<String> argv, String flag) {
        int i = argv.indexOf(flag);
        return i >= 0 && i + 1 < argv.size() ? Optional.of(argv.get(i + 1)) : Optional.empty();
    }

    /**
     * The fake engine an engine container's command line asks for. As a real engine does, it listens where its own
     * command line says, whatever the Pod's annotations claim: the hook and the reads, which follow the annotations,
     * find it only if the operator rendered both alike.
     *
     * @param declaredPort the container's first declared port, taken when the command names none
     * @param shaping      changes to the behaviour its image and command give, made before it starts
     */
    public static FakeEngine start(
            Engine engine,
            String image,
            List<String> command,
            int declaredPort,
            String address,
            Consumer<EngineBehaviour> shaping)
            throws IOException {
        int port = argAfter(command, "--port").map(Integer::parseInt).orElse(declaredPort);
        SSLContext tls = command.contains("--ssl-certfile") ? SelfSignedTls.shared() : null;
        EngineBehaviour behaviour = EngineBehaviour.ofContainer(engine, image, command);
        int nodes = argAfter(command, "--nnodes")
                .filter(n -> n.matches("\\d{1,6}"))
                .map(Integer::parseInt)
                .orElse(1);
        if (FollowerGauges.onFollowers(engine, nodes, command).isPresent()) {
            behaviour.dataParallelMembers(nodes);
        }
        shaping.accept(behaviour);
        return FakeEngine.start(
                engine,
                address,
                port,
                argAfter(command, "--served-model-name").orElse("model"),
                new EngineFaults(),
                behaviour,
                tls);
    }
}
