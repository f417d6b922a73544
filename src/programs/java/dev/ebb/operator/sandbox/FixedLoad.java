package dev.ebb.operator.sandbox;

import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.KubeProxyService;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import dev.ebb.operator.sim.LoadGenerator.Request;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A fixed set of streamed completions, sent by a few clients in turn until every one has ended. A request refused
 * before anything streamed (no endpoint, a closed connection, a 503) is sent again after a pause, as a client would;
 * one that started streaming and ended early is cut, and stays cut. Each request ends with its index in the set as
 * its id, so its planned length can be looked up.
 */
final class FixedLoad implements AutoCloseable {
    /** One client's way to the engines; one per client thread, so it may keep a connection between requests. */
    interface Client extends AutoCloseable {
        Request send(int tokens);

        @Override
        void close();
    }

    private final List<Integer> lengths;
    private final Duration tokenInterval;
    private final ExecutorService clients;
    private final int clientCount;
    private final AtomicInteger next = new AtomicInteger();
    private final List<Request> ended = new CopyOnWriteArrayList<>();
    private final AtomicLong refusals = new AtomicLong();
    private volatile boolean stopped;

    FixedLoad(Choreography.Load load) {
        this.lengths = load.lengths();
        this.tokenInterval = load.tokenInterval();
        this.clientCount = load.clients();
        this.clients = Executors.newFixedThreadPool(load.clients(), DaemonThreads.named("fixed-load-client"));
    }

    /** Starts the clients, client i after {@code i × stagger}. */
    void start(Supplier<Client> newClient, Duration stagger) {
        for (int i = 0; i < clientCount; i++) {
            Duration delay = stagger.multipliedBy(i);
            clients.submit(() -> {
                pause(delay);
                try (Client client = newClient.get()) {
                    for (int index = next.getAndIncrement();
                            index < lengths.size() && !stopped;
                            index = next.getAndIncrement()) {
                        ended.add(sendUntilStreamed(client, index));
                    }
                }
            });
        }
    }

    private Request sendUntilStreamed(Client client, int index) {
        while (true) {
            Request r = client.send(lengths.get(index));
            if (r.outcome() != Outcome.REJECTED || stopped) {
                return new Request(index, r.pod(), r.start(), r.end(), r.outcome(), r.why());
            }
            refusals.incrementAndGet();
            pause(tokenInterval.multipliedBy(2));
        }
    }

    /** True once every request of the set has ended. */
    boolean done() {
        return ended.size() == lengths.size();
    }

    long count(Outcome outcome) {
        return ended.stream().filter(r -> r.outcome() == outcome).count();
    }

    /** Every request ended so far, in the order of the set. */
    List<Request> requests() {
        return ended.stream().sorted(Comparator.comparingLong(Request::id)).toList();
    }

    /** Times a request was refused before it streamed and sent again. */
    long refusals() {
        return refusals.get();
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stopped = true;
        clients.shutdownNow();
    }

    /** Through a router's client entry: the router picks the engine for every request. */
    static Client throughRouter(LoadGenerator router) {
        return new Client() {
            @Override
            public Request send(int tokens) {
                return router.sendTokens(tokens);
            }

            @Override
            public void close() {}
        };
    }

    /**
     * Through a Service: a connection is opened when the client has none and kept between requests, as an HTTP/1.1
     * client pool keeps it, so the Pod it reached keeps getting this client's requests until one side closes it.
     */
    static Client throughService(KubeProxyService service, Duration tokenInterval) {
        return new Client() {
            private KubeProxyService.Connection kept;

            @Override
            public Request send(int tokens) {
                Instant start = Instant.now();
                try {
                    if (kept == null) {
                        kept = service.connect().orElse(null);
                    }
                } catch (IOException e) {
                    return new Request(
                            0, null, start, Instant.now(), Outcome.REJECTED, "connection failed: " + e.getMessage());
                }
                if (kept == null) {
                    return new Request(0, null, start, Instant.now(), Outcome.REJECTED, "no endpoint");
                }
                Request r;
                try {
                    r = kept.stream(tokens, tokenInterval);
                } catch (RuntimeException e) {
                    // a chunk header broken off where the stream was cut
                    r = new Request(
                            0, kept.pod(), start, Instant.now(), Outcome.CUT, "stream broken off: " + e.getMessage());
                }
                if (r.outcome() != Outcome.COMPLETED) {
                    close();
                }
                return r;
            }

            @Override
            public void close() {
                if (kept != null) {
                    try {
                        kept.close();
                    } catch (IOException e) {
                        // closing a connection already broken
                    }
                    kept = null;
                }
            }
        };
    }
}
