package dev.ebb.operator.read;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.ExecListener;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * pods/exec over the API server's websocket, wrapped in a Uni that completes on the command's exit code, on the
 * stdout cap, on a failure, or at the deadline, and closes the websocket however it ends, cancellation included.
 */
@ApplicationScoped
public class Fabric8PodExec implements PodExec {
    private final Opener opener;

    /** Opens the exec stream: a Pod lookup and the websocket handshake. Blocks until the stream is open. */
    interface Opener {
        ExecWatch open(Pod pod, String container, List<String> argv, OutputStream stdout, ExecListener listener);
    }

    @Inject
    public Fabric8PodExec(KubernetesClient client) {
        this(throughApiServer(client));
    }

    Fabric8PodExec(Opener opener) {
        this.opener = opener;
    }

    static Opener throughApiServer(KubernetesClient client) {
        return (pod, container, argv, stdout, listener) -> client.pods().inNamespace(pod.getMetadata().getNamespace())
                .withName(pod.getMetadata().getName())
                .inContainer(container)
                .writingOutput(stdout)
                .writingError(OutputStream.nullOutputStream())
                .usingListener(listener)
                .exec(argv.toArray(String[]::new));
    }

    @Override
    public Uni<ExecResult> exec(Pod pod, String container, List<String> argv, ExecLimits limits) {
        // opening the exec (a Pod lookup and the websocket handshake) blocks, so it runs off the caller's thread,
        // and the deadline covers it
        return Uni.createFrom().<ExecResult>emitter(emitter -> start(pod, container, argv, limits, emitter))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .ifNoItem().after(limits.deadline()).recoverWithItem(() -> new ExecResult.TimedOut(limits.deadline()));
    }

    private void start(Pod pod, String container, List<String> argv, ExecLimits limits, UniEmitter<? super ExecResult> emitter) {
        AtomicReference<ExecWatch> watch = new AtomicReference<>();
        CappedStream stdout = new CappedStream(limits.maxStdoutBytes(),
                () -> emitter.complete(new ExecResult.Overflowed(limits.maxStdoutBytes())));
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
            ExecWatch started = opener.open(pod, container, argv, stdout, new ExecListener() {
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
            started.exitCode().whenComplete((code, error) -> emitter.complete(error != null ? new ExecResult.Failed(String.valueOf(error.getMessage()))
                    : code == null || code < 0 ? new ExecResult.Failed("the exec ended without a readable exit status")
                    : new ExecResult.Exited(code, stdout.bytes())));
        } catch (RuntimeException e) {
            emitter.complete(new ExecResult.Failed(String.valueOf(e.getMessage())));
        }
    }

    private static String describe(Throwable t, ExecListener.Response response) {
        if (response != null) {
            return "HTTP " + response.code() + ": " + t.getMessage();
        }
        return String.valueOf(t.getMessage());
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
