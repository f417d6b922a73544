package dev.ebb.operator.sim;

import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.stream.Stream;

/**
 * Clients that stream completions through a router or a Service and record how each request ended. A stream
 * that ends without its {@code [DONE]} line was cut: the tokens already sent cannot be taken back.
 */
public final class LoadGenerator implements AutoCloseable {
    /**
     * Where the next request goes: a Pod's engine chosen here (a Service's endpoint, a Pod named by a test), or a
     * router's client entry, with no Pod named, where the router chooses and names the Pod that served it in
     * {@link FakeRouter#SERVED_BY}.
     */
    public interface Target {
        Optional<RouteTarget> pick();
    }

    public enum Outcome {
        /** The whole stream arrived. */
        COMPLETED,
        /** The stream started and ended early. */
        CUT,
        /** Refused before anything streamed (no endpoint, connection refused, 5xx): a client may retry it. */
        REJECTED
    }

    /** @param pod the Pod that served the request; null when a router refused it before choosing one */
    public record Request(long id, String pod, Instant start, Instant end, Outcome outcome, String why) {}

    private final Target target;
    private final int concurrency;
    private final IntSupplier tokens;
    private final Duration tokenInterval;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final AtomicLong ids = new AtomicLong();
    private final ExecutorService clients;
    private volatile boolean sending;
    /** The fake engines serve whatever is asked; a released router sends a request only to workers serving its model. */
    private volatile String model = "m";

    /**
     * @param concurrency clients sending one request after another
     * @param tokens tokens per request
     * @param tokenInterval time the engine takes per token, so a request lasts about tokens × interval
     */
    public LoadGenerator(Target target, int concurrency, int tokens, Duration tokenInterval) {
        this(target, concurrency, () -> tokens, tokenInterval);
    }

    /** @param tokens drawn anew for each request, for generations of mixed lengths */
    public LoadGenerator(Target target, int concurrency, IntSupplier tokens, Duration tokenInterval) {
        this.target = target;
        this.concurrency = concurrency;
        this.tokens = tokens;
        this.tokenInterval = tokenInterval;
        this.clients = Executors.newFixedThreadPool(concurrency, DaemonThreads.named("load-client"));
    }

    /** Asks for this model from now on: the name the engines serve it by. */
    public LoadGenerator asking(String servedModel) {
        model = servedModel;
        return this;
    }

    /** Starts the clients; each sends requests back to back until {@link #stop} or the time limit. */
    public LoadGenerator start(Duration limit) {
        sending = true;
        Instant until = Instant.now().plus(limit);
        for (int i = 0; i < concurrency; i++) {
            clients.submit(() -> {
                while (sending && Instant.now().isBefore(until)) {
                    Request r = send();
                    if (r.outcome() == Outcome.REJECTED) {
                        pause(tokenInterval.multipliedBy(2));
                    }
                }
            });
        }
        return this;
    }

    /** Sends one request and waits for it to end. */
    public Request send() {
        return send(tokens);
    }

    /** Sends one request of this many tokens, whatever this generator draws, and waits for it to end. */
    public Request sendTokens(int length) {
        return send(() -> length);
    }

    private Request send(IntSupplier lengths) {
        long id = ids.incrementAndGet();
        Instant start = Instant.now();
        Optional<RouteTarget> to = target.pick();
        if (to.isEmpty()) {
            return record(new Request(id, null, start, Instant.now(), Outcome.REJECTED, "no endpoint"));
        }
        int length = lengths.getAsInt();
        String body = "{\"model\":\"" + model + "\",\"prompt\":\"hello\",\"stream\":true,\"max_tokens\":" + length
                + ",\"token_interval_ms\":" + tokenInterval.toMillis() + "}";
        HttpRequest request = HttpRequest.newBuilder(to.get().base().resolve("/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        String pod = to.get().pod();
        try {
            HttpResponse<Stream<String>> response = http.send(request, HttpResponse.BodyHandlers.ofLines());
            pod = response.headers().firstValue(FakeRouter.SERVED_BY).orElse(pod);
            if (response.statusCode() != 200) {
                response.body().close();
                return record(
                        new Request(id, pod, start, Instant.now(), Outcome.REJECTED, "HTTP " + response.statusCode()));
            }
            int received = 0;
            boolean done = false;
            boolean error = false;
            try (Stream<String> lines = response.body()) {
                Iterator<String> it = lines.iterator();
                while (it.hasNext()) {
                    String line = it.next();
                    if (line.equals("data: [DONE]")) {
                        done = true;
                    } else if (line.startsWith("data: {\"error\"")) {
                        // vLLM ends a generation it aborts with an error event, and still sends [DONE] after it
                        // (observed at vLLM 0.32.0 on SIGTERM; RealVllmSigtermIT)
                        error = true;
                    } else if (line.startsWith("data: ")) {
                        received++;
                    }
                }
            }
            return record(
                    done && !error && received == length
                            ? new Request(id, pod, start, Instant.now(), Outcome.COMPLETED, received + " tokens")
                            : new Request(
                                    id,
                                    pod,
                                    start,
                                    Instant.now(),
                                    Outcome.CUT,
                                    "stream ended after " + received + " of " + length + " tokens"
                                            + (error ? " with an error event" : done ? "" : " without [DONE]")));
        } catch (UncheckedIOException e) {
            return record(new Request(
                    id,
                    pod,
                    start,
                    Instant.now(),
                    Outcome.CUT,
                    "connection lost: " + e.getCause().getMessage()));
        } catch (java.io.IOException e) {
            return record(new Request(
                    id, pod, start, Instant.now(), Outcome.REJECTED, "connection failed: " + e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return record(new Request(id, pod, start, Instant.now(), Outcome.REJECTED, "interrupted"));
        }
    }

    /** Stops sending new requests and waits, at most {@code wait}, for the ones in flight to end. */
    public void stop(Duration wait) throws InterruptedException {
        sending = false;
        clients.shutdown();
        clients.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    public List<Request> requests() {
        return List.copyOf(requests);
    }

    public long count(Outcome outcome) {
        return requests.stream().filter(r -> r.outcome() == outcome).count();
    }

    private Request record(Request r) {
        requests.add(r);
        return r;
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
        sending = false;
        clients.shutdownNow();
    }
}
