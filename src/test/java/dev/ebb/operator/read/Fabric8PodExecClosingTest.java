package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.ExecListener;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** However an exec ends, its stream is closed exactly once: shown with a stream that counts its closes. */
class Fabric8PodExecClosingTest {
    private static final List<String> ARGV = List.of("python3", "-c", "print(1)");
    private static final ExecLimits LIMITS = new ExecLimits(64, Duration.ofSeconds(2));
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final Pod pod = new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .withNamespace("ns")
            .endMetadata()
            .build();
    private final FakeWatch watch = new FakeWatch();
    private final AtomicReference<OutputStream> stdout = new AtomicReference<>();
    private final AtomicReference<ExecListener> listener = new AtomicReference<>();
    private final CountDownLatch opened = new CountDownLatch(1);

    /** An open exec stream that does nothing until the test makes it; counts its closes. */
    private static final class FakeWatch implements ExecWatch {
        final CompletableFuture<Integer> exit = new CompletableFuture<>();
        final AtomicInteger closes = new AtomicInteger();

        @Override
        public OutputStream getInput() {
            return null;
        }

        @Override
        public InputStream getOutput() {
            return null;
        }

        @Override
        public InputStream getError() {
            return null;
        }

        @Override
        public InputStream getErrorChannel() {
            return null;
        }

        @Override
        public void close() {
            closes.incrementAndGet();
        }

        @Override
        public void resize(int cols, int rows) {}

        @Override
        public CompletableFuture<Integer> exitCode() {
            return exit;
        }
    }

    private Fabric8PodExec exec() {
        return new Fabric8PodExec((p, container, argv, out, l) -> {
            stdout.set(out);
            listener.set(l);
            opened.countDown();
            return watch;
        });
    }

    private Uni<ExecResult> started(ExecLimits limits) throws InterruptedException {
        Uni<ExecResult> uni = exec().exec(pod, "main", ARGV, limits).memoize().indefinitely();
        uni.subscribe().with(r -> {});
        assertThat(opened.await(5, TimeUnit.SECONDS)).isTrue();
        return uni;
    }

    private void closedOnce() {
        await().atMost(WAIT).untilAsserted(() -> assertThat(watch.closes).hasValue(1));
    }

    @Test
    void exitZeroCompletesWithTheOutputAndClosesTheStream() throws Exception {
        Uni<ExecResult> read = started(LIMITS);
        stdout.get().write("up 1\n".getBytes(StandardCharsets.UTF_8));
        watch.exit.complete(0);

        assertThat(read.await().atMost(WAIT)).isInstanceOfSatisfying(ExecResult.Exited.class, exited -> {
            assertThat(exited.code()).isZero();
            assertThat(exited.stdout()).asString(StandardCharsets.UTF_8).isEqualTo("up 1\n");
        });
        closedOnce();
    }

    @Test
    void nonZeroExitClosesTheStream() throws Exception {
        Uni<ExecResult> read = started(LIMITS);
        watch.exit.complete(5);

        assertThat(read.await().atMost(WAIT))
                .isInstanceOfSatisfying(
                        ExecResult.Exited.class, e -> assertThat(e.code()).isEqualTo(5));
        closedOnce();
    }

    @Test
    void outputOverTheCapEndsTheReadAndClosesTheStreamWithoutAnExitCode() throws Exception {
        Uni<ExecResult> read = started(LIMITS);
        stdout.get().write(new byte[40]);
        stdout.get().write(new byte[40]);

        assertThat(read.await().atMost(WAIT)).isEqualTo(new ExecResult.Overflowed(64));
        closedOnce();
    }

    @Test
    void deadlineClosesTheStream() throws Exception {
        long start = System.nanoTime();
        Uni<ExecResult> read = started(new ExecLimits(64, Duration.ofMillis(300)));

        assertThat(read.await().atMost(WAIT)).isEqualTo(new ExecResult.TimedOut(Duration.ofMillis(300)));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(2000));
        closedOnce();
    }

    @Test
    void failureReportedByTheStreamClosesIt() throws Exception {
        Uni<ExecResult> read = started(LIMITS);
        listener.get().onFailure(new KubernetesClientException("connection reset"), null);

        assertThat(read.await().atMost(WAIT)).isEqualTo(new ExecResult.Failed("connection reset"));
        closedOnce();
    }

    @Test
    void exitCodeThatFailsIsAFailedExecAndClosesTheStream() throws Exception {
        Uni<ExecResult> read = started(LIMITS);
        watch.exit.completeExceptionally(new IllegalStateException("status frame unreadable"));

        assertThat(read.await().atMost(WAIT)).isInstanceOf(ExecResult.Failed.class);
        closedOnce();
    }

    @Test
    void unreadableExitStatusIsAFailedExecNotAnExitCode() throws Exception {
        Uni<ExecResult> read = started(LIMITS);
        watch.exit.complete(-1);

        assertThat(read.await().atMost(WAIT))
                .isEqualTo(new ExecResult.Failed("the exec ended without a readable exit status"));
        closedOnce();
    }

    @Test
    void cancellingAnOpenReadClosesTheStreamAndDeliversNothing() throws Exception {
        AtomicReference<ExecResult> delivered = new AtomicReference<>();
        Cancellable subscription =
                exec().exec(pod, "main", ARGV, LIMITS).subscribe().with(delivered::set);
        assertThat(opened.await(5, TimeUnit.SECONDS)).isTrue();

        subscription.cancel();

        closedOnce();
        watch.exit.complete(0);
        assertThat(delivered).hasValue(null);
    }

    @Test
    void cancellingWhileTheStreamIsStillOpeningClosesItOnceOpen() throws Exception {
        CountDownLatch handshake = new CountDownLatch(1);
        CountDownLatch opening = new CountDownLatch(1);
        Fabric8PodExec slowToOpen = new Fabric8PodExec((p, container, argv, out, l) -> {
            opening.countDown();
            try {
                handshake.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return watch;
        });
        Cancellable subscription =
                slowToOpen.exec(pod, "main", ARGV, LIMITS).subscribe().with(r -> {});
        assertThat(opening.await(5, TimeUnit.SECONDS)).isTrue();

        subscription.cancel();
        handshake.countDown();

        closedOnce();
    }

    @Test
    void streamThatCannotBeOpenedIsAFailedExec() {
        Fabric8PodExec refused = new Fabric8PodExec((p, container, argv, out, l) -> {
            throw new KubernetesClientException("pods \"p\" not found");
        });

        assertThat(refused.exec(pod, "main", ARGV, LIMITS).await().atMost(WAIT))
                .isEqualTo(new ExecResult.Failed("pods \"p\" not found"));
    }
}
