package dev.ebb.operator.sim;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A pause of a whole operator process as the API server sees it, the way a long GC pause, a frozen cgroup or a stunned
 * VM makes one: from a chosen request on, every request the operator sends waits, its Lease renewals among them, until
 * the pause ends; then all go on at once. Its threads stop at their next request rather than at once, which is as
 * good for the operator's effects, since every one of them is a request. The process's own end on a lost Lease waits
 * too, and stays held after the thaw until {@link #endHeldHalt}: a resumed pass may run before the elector notices,
 * and this lets a test take that worst order every time.
 */
public final class ProcessPause implements Interceptor {
    /** A request the operator sent, as the API server would log it. */
    public record Sent(String method, String path) {}

    /** The API server's answer to a request the operator sent. */
    public record Answered(String method, String path, int code) {}

    private volatile Predicate<HttpRequest> trap = request -> false;
    private volatile Predicate<HttpRequest> armsAfterSuccess = request -> false;
    private volatile Thread armedThread;
    private volatile CountDownLatch frozen = new CountDownLatch(1);
    private volatile CountDownLatch thawed = new CountDownLatch(0);
    private volatile CountDownLatch haltAllowed = new CountDownLatch(0);
    /** The thread that sent the write {@link #freezeAfter} waits on. */
    private volatile Thread writer;

    private final List<Sent> sentSinceThaw = new CopyOnWriteArrayList<>();
    private final List<Answered> answeredSinceThaw = new CopyOnWriteArrayList<>();
    private volatile boolean recording;

    /** Freezes the process at the first request that matches, before it is sent. */
    public synchronized void freezeAt(Predicate<HttpRequest> request) {
        arm();
        trap = request;
    }

    /**
     * Freezes the process at the next request of the thread whose request matched and succeeded: between a write
     * and what follows it.
     */
    public synchronized void freezeAfter(Predicate<HttpRequest> request) {
        arm();
        armsAfterSuccess = request;
    }

    /** Freezes the process at its next request, whatever it is. */
    public void freezeNow() {
        freezeAt(request -> true);
    }

    private void arm() {
        frozen = new CountDownLatch(1);
        thawed = new CountDownLatch(1);
        haltAllowed = new CountDownLatch(1);
        sentSinceThaw.clear();
        answeredSinceThaw.clear();
        recording = false;
    }

    public boolean awaitFrozen(Duration within) throws InterruptedException {
        return frozen.await(within.toMillis(), TimeUnit.MILLISECONDS);
    }

    public boolean isFrozen() {
        return frozen.getCount() == 0 && thawed.getCount() > 0;
    }

    /** Lets every held request go, and any later one; a halt asked for meanwhile stays held. */
    public synchronized void thaw() {
        trap = request -> false;
        armsAfterSuccess = request -> false;
        armedThread = null;
        recording = true;
        thawed.countDown();
    }

    /** Lets the process end, if its Lease was found lost. */
    public void endHeldHalt() {
        haltAllowed.countDown();
    }

    /** Called by the process's halt: waits while the process is paused, and after, until the test lets it go on. */
    void awaitHaltAllowed() {
        try {
            haltAllowed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What the operator sent after the thaw, in order. */
    public List<Sent> sentSinceThaw() {
        return List.copyOf(sentSinceThaw);
    }

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        if (frozen.getCount() > 0 && (trap.test(request) || Thread.currentThread() == armedThread)) {
            frozen.countDown();
        }
        if (armsAfterSuccess.test(request)) {
            writer = Thread.currentThread();
        }
        if (frozen.getCount() == 0) {
            try {
                thawed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (recording) {
            sentSinceThaw.add(new Sent(request.method(), request.uri().getPath()));
        }
    }

    /** The answers to what the operator sent after the thaw, in the order they came. */
    public List<Answered> answeredSinceThaw() {
        return List.copyOf(answeredSinceThaw);
    }

    @Override
    public void after(HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        if (recording) {
            answeredSinceThaw.add(new Answered(request.method(), request.uri().getPath(), response.code()));
        }
        // the response may come back on another thread: the thread that sent the write is the one that goes on from it
        if (response.code() / 100 == 2 && armsAfterSuccess.test(request)) {
            armedThread = writer;
        }
    }
}
