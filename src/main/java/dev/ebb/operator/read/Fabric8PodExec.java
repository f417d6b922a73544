package dev.ebb.operator.read;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.ExecListener;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.http.WebSocketHandshakeException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.http.UpgradeRejectedException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * pods/exec over the API server's websocket, wrapped in a Uni that completes on the command's exit code, on the
 * stdout cap, on a failure, or at the deadline, and closes the websocket however it ends, cancellation included.
 */
@ApplicationScoped
public class Fabric8PodExec implements PodExec {
    /** How much of the API server's reason for a refusal is kept: enough for RBAC's sentence, little in status. */
    static final int MAX_REFUSAL_CHARS = 300;
    /** A refusal body longer than this is not read as a Status at all. */
    private static final int MAX_REFUSAL_BODY_BYTES = 64 * 1024;

    private final Opener opener;

    /** Opens the exec stream: a Pod lookup and the websocket handshake. Blocks until the stream is open. */
    interface Opener {
        ExecWatch open(Pod pod, String container, ExecCommand command, OutputStream stdout, ExecListener listener);
    }

    @Inject
    public Fabric8PodExec(KubernetesClient client) {
        this(throughApiServer(client));
    }

    Fabric8PodExec(Opener opener) {
        this.opener = opener;
    }

    static Opener throughApiServer(KubernetesClient client) {
        return (pod, container, command, stdout, listener) -> {
            var inContainer = client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .inContainer(container);
            byte[] stdin = command.stdin();
            var streams = (stdin.length == 0 ? inContainer : inContainer.redirectingInput())
                    .writingOutput(stdout)
                    .writingError(OutputStream.nullOutputStream())
                    .usingListener(listener);
            ExecWatch watch = streams.exec(command.argv().toArray(String[]::new));
            if (stdin.length > 0) {
                writeStdin(watch, stdin);
            }
            return watch;
        };
    }

    /** The command reads what it needs and then exits; stdin stays open, as the websocket protocol cannot close it. */
    private static void writeStdin(ExecWatch watch, byte[] stdin) {
        try {
            watch.getInput().write(stdin);
            watch.getInput().flush();
        } catch (IOException e) {
            watch.close();
            throw new UncheckedIOException("writing the command's stdin failed", e);
        }
    }

    @Override
    public Uni<ExecResult> exec(Pod pod, String container, ExecCommand command, ExecLimits limits) {
        // opening the exec (a Pod lookup and the websocket handshake) blocks, so it runs off the caller's thread,
        // and the deadline covers it
        return Uni.createFrom()
                .<ExecResult>emitter(emitter -> start(pod, container, command, limits, emitter))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .ifNoItem()
                .after(limits.deadline())
                .recoverWithItem(() -> new ExecResult.TimedOut(limits.deadline()));
    }

    private void start(
            Pod pod, String container, ExecCommand command, ExecLimits limits, UniEmitter<? super ExecResult> emitter) {
        AtomicReference<ExecWatch> watch = new AtomicReference<>();
        CappedStream stdout = new CappedStream(
                limits.maxStdoutBytes(), () -> emitter.complete(new ExecResult.Overflowed(limits.maxStdoutBytes())));
        AtomicBoolean ended = new AtomicBoolean();
        AtomicBoolean closed = new AtomicBoolean();
        // the read can end while the stream is still opening: whichever side comes second closes it, once
        Consumer<ExecWatch> closeOnce = w -> {
            if (w != null && closed.compareAndSet(false, true)) {
                w.close();
            }
        };
        emitter.onTermination(() -> {
            ended.set(true);
            closeOnce.accept(watch.get());
        });
        try {
            ExecWatch started = opener.open(pod, container, command, stdout, new ExecListener() {
                @Override
                public void onFailure(Throwable t, Response response) {
                    emitter.complete(new ExecResult.Failed(describe(t, response)));
                }

                @Override
                public void onClose(int code, String reason) {
                    // the exit code, or the lack of one, completes the read
                }
            });
            watch.set(started);
            if (ended.get()) {
                closeOnce.accept(started);
                return;
            }
            // the client reports a status frame it cannot read as code -1: that is no exit code of the command's
            started.exitCode()
                    .whenComplete((code, error) -> emitter.complete(
                            error != null
                                    ? new ExecResult.Failed(String.valueOf(error.getMessage()))
                                    : code == null || code < 0
                                            ? new ExecResult.Failed("the exec ended without a readable exit status")
                                            : new ExecResult.Exited(code, stdout.bytes())));
        } catch (RuntimeException e) {
            emitter.complete(new ExecResult.Failed(describe(e)));
        }
    }

    /**
     * A refused handshake carries the API server's Status, whose message says what was refused and for whom (RBAC's
     * "cannot create resource pods/exec"); the client's own exception says only "null". The body comes from the
     * server, so only a Status's message is taken, as one line of bounded length.
     */
    private static String describe(Throwable t, ExecListener.Response response) {
        if (response == null) {
            return String.valueOf(t.getMessage());
        }
        String body;
        try {
            body = response.body();
        } catch (IOException unreadable) {
            body = null;
        }
        return refused(response.code(), body == null || body.isEmpty() ? rejectedBody(t) : Optional.of(body));
    }

    /** fabric8 throws, rather than calling the listener, a refusal whose body it cannot read as a Status. */
    private static String describe(RuntimeException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof WebSocketHandshakeException handshake && handshake.getResponse() != null) {
                return refused(handshake.getResponse().code(), rejectedBody(handshake));
            }
        }
        return String.valueOf(e.getMessage());
    }

    /** fabric8's Vert.x client (7.5.2) keeps a refused upgrade's body on Vert.x's own exception, not on its response. */
    private static Optional<String> rejectedBody(Throwable handshake) {
        return handshake.getCause() instanceof UpgradeRejectedException rejected
                        && rejected.getBody() != null
                        && rejected.getBody().length() <= MAX_REFUSAL_BODY_BYTES
                ? Optional.of(rejected.getBody().toString(StandardCharsets.UTF_8))
                : Optional.empty();
    }

    private static String refused(int code, Optional<String> body) {
        return "HTTP " + code
                + body.flatMap(Fabric8PodExec::statusMessage)
                        .map(message -> ": " + message)
                        .orElse("");
    }

    private static Optional<String> statusMessage(String body) {
        if (body.length() > MAX_REFUSAL_BODY_BYTES) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(
                            Serialization.unmarshal(body, Status.class).getMessage())
                    .map(m -> m.replaceAll("\\p{Cntrl}+", " ").strip())
                    .filter(m -> !m.isEmpty())
                    .map(m -> m.length() <= MAX_REFUSAL_CHARS ? m : m.substring(0, MAX_REFUSAL_CHARS - 1) + "…");
        } catch (RuntimeException notAStatus) {
            return Optional.empty();
        }
    }

    /** Keeps at most {@code cap} bytes; the first byte over it ends the read. */
    static final class CappedStream extends OutputStream {
        private final int cap;
        private final Runnable onOverflow;
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private boolean overflowed;

        CappedStream(int cap, Runnable onOverflow) {
            this.cap = cap;
            this.onOverflow = onOverflow;
        }

        @Override
        public synchronized void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            if (overflowed) {
                return;
            }
            if (kept.size() + len > cap) {
                overflowed = true;
                onOverflow.run();
                return;
            }
            kept.write(b, off, len);
        }

        synchronized byte[] bytes() {
            return kept.toByteArray();
        }
    }
}
