package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A role's ClusterIP Service as kube-proxy carries it: each NEW connection goes to an endpoint of the Service's
 * EndpointSlice as this node last learnt it, {@code lag} behind the API server; a connection once made stays with
 * its Pod whatever the slice says later (conntrack), until one side closes it. Clients connect from their own source
 * address, never 127.0.0.1, so the member's connection table shows them as a real Pod's would.
 */
public final class KubeProxyService implements AutoCloseable {
    private static final Duration LOOK = Duration.ofMillis(50);

    private record Ready(String pod, String address, int port) {}

    private record View(Instant at, List<Ready> endpoints) {}

    private final EndpointSlices endpoints;
    private final String namespace;
    private final String service;
    private final Duration lag;
    private final String sourceAddress;
    private final Deque<View> views = new ArrayDeque<>();
    private final AtomicLong turn = new AtomicLong();
    private final ScheduledExecutorService looker =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("kube-proxy"));

    /**
     * @param lag how long an endpoint change takes to reach this node
     * @param sourceAddress the address clients connect from
     */
    public KubeProxyService(
            EndpointSlices endpoints, String namespace, String service, Duration lag, String sourceAddress) {
        this.endpoints = endpoints;
        this.namespace = namespace;
        this.service = service;
        this.lag = lag;
        this.sourceAddress = sourceAddress;
        look();
        looker.scheduleAtFixedRate(this::look, LOOK.toMillis(), LOOK.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void look() {
        List<Ready> ready = endpoints.slicesOf(namespace, service).stream()
                .filter(slice ->
                        slice.getPorts() != null && !slice.getPorts().isEmpty() && slice.getEndpoints() != null)
                .flatMap(slice -> slice.getEndpoints().stream()
                        .filter(e -> Boolean.TRUE.equals(e.getConditions().getReady()))
                        .map(e -> ready(e, slice)))
                .toList();
        Instant now = Instant.now();
        synchronized (views) {
            views.addLast(new View(now, ready));
            // the newest view old enough to have reached this node is all a connection needs; older ones go
            while (views.size() > 1 && !views.toArray(View[]::new)[1].at().isAfter(now.minus(lag))) {
                views.removeFirst();
            }
        }
    }

    private static Ready ready(Endpoint endpoint, EndpointSlice slice) {
        return new Ready(
                endpoint.getTargetRef().getName(),
                endpoint.getAddresses().get(0),
                slice.getPorts().get(0).getPort());
    }

    /** The endpoints this node knows now: what the slice listed {@code lag} ago. */
    private List<Ready> known() {
        synchronized (views) {
            return views.peekFirst().endpoints();
        }
    }

    /** The pods new connections may go to now. */
    public List<String> reachable() {
        return known().stream().map(Ready::pod).toList();
    }

    /** A new connection through the Service, to the next endpoint this node knows; empty when it knows none. */
    public Optional<Connection> connect() throws IOException {
        List<Ready> known = known();
        if (known.isEmpty()) {
            return Optional.empty();
        }
        Ready to = known.get((int) (turn.getAndIncrement() % known.size()));
        return Optional.of(Connection.open(to.pod(), to.address(), to.port(), sourceAddress));
    }

    /** New connections through the Service until one lands on this Pod; the others are closed again. */
    public Connection connectTo(String pod) throws IOException {
        for (int i = 0; i < 10; i++) {
            Connection connection = connect().orElseThrow();
            if (connection.pod().equals(pod)) {
                return connection;
            }
            connection.close();
        }
        throw new IOException("no connection through the Service reached " + pod + " in 10 tries");
    }

    @Override
    public void close() {
        looker.shutdownNow();
    }

    /** One client connection, kept alive between requests as an HTTP/1.1 client pool keeps it. */
    public static final class Connection implements AutoCloseable {
        private final String pod;
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        Connection(String pod, Socket socket) throws IOException {
            this.pod = pod;
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        /** A connection straight to a Pod's address, as a scraper or a probe makes it, from {@code sourceAddress}. */
        public static Connection open(String pod, String address, int port, String sourceAddress) throws IOException {
            Socket socket = new Socket();
            socket.bind(new InetSocketAddress(InetAddress.getByName(sourceAddress), 0));
            socket.connect(new InetSocketAddress(address, port), 2_000);
            return new Connection(pod, socket);
        }

        public String pod() {
            return pod;
        }

        /**
         * One GET on this connection, read to the end of its answer; its status line. With {@code keepAlive} false it
         * asks the server to close the connection after answering, as a client that never reuses connections does.
         *
         * @throws IOException when the connection is closed or breaks before the answer ends
         */
        public synchronized String get(String path, boolean keepAlive) throws IOException {
            out.write(
                    ("GET " + path + " HTTP/1.1\r\nHost: pod\r\n" + (keepAlive ? "" : "Connection: close\r\n") + "\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String status = line();
            if (status == null) {
                throw new IOException("connection closed");
            }
            body();
            return status;
        }

        /** Streams one completion on this connection and reads it to its end. */
        public synchronized LoadGenerator.Request stream(int tokens, Duration tokenInterval) {
            Instant start = Instant.now();
            String body = "{\"model\":\"m\",\"prompt\":\"hello\",\"stream\":true,\"max_tokens\":" + tokens
                    + ",\"token_interval_ms\":" + tokenInterval.toMillis() + "}";
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            boolean answered = false;
            try {
                out.write(
                        ("POST /v1/completions HTTP/1.1\r\nHost: service\r\nContent-Type: application/json\r\nContent-Length: "
                                        + bytes.length + "\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                out.write(bytes);
                out.flush();
                String status = line();
                if (status == null) {
                    return new LoadGenerator.Request(
                            0, pod, start, Instant.now(), LoadGenerator.Outcome.REJECTED, "connection closed");
                }
                answered = true;
                String page = body();
                if (!status.startsWith("HTTP/1.1 200")) {
                    return new LoadGenerator.Request(
                            0, pod, start, Instant.now(), LoadGenerator.Outcome.REJECTED, status);
                }
                long received = page.lines()
                        .filter(l -> l.startsWith("data: ") && !l.equals("data: [DONE]"))
                        .count();
                boolean done = page.lines().anyMatch("data: [DONE]"::equals);
                return new LoadGenerator.Request(
                        0,
                        pod,
                        start,
                        Instant.now(),
                        done ? LoadGenerator.Outcome.COMPLETED : LoadGenerator.Outcome.CUT,
                        received + " of " + tokens + " tokens");
            } catch (IOException e) {
                // a kept connection the server closed while idle fails on reuse before any answer: nothing streamed, so
                // the request was refused rather than cut, and a client sends it again on a new connection
                return new LoadGenerator.Request(
                        0,
                        pod,
                        start,
                        Instant.now(),
                        answered ? LoadGenerator.Outcome.CUT : LoadGenerator.Outcome.REJECTED,
                        "connection lost: " + e.getMessage());
            }
        }

        /** The headers, then the body they frame: chunked, or as long as Content-Length says (none: empty). */
        private String body() throws IOException {
            boolean chunked = false;
            long length = 0;
            for (String header = line(); header != null && !header.isEmpty(); header = line()) {
                String lower = header.toLowerCase(Locale.ROOT);
                chunked |= lower.startsWith("transfer-encoding:") && lower.contains("chunked");
                if (lower.startsWith("content-length:")) {
                    length = Long.parseLong(
                            lower.substring("content-length:".length()).trim());
                }
            }
            return chunked ? chunks() : new String(in.readNBytes((int) length), StandardCharsets.UTF_8);
        }

        /** A chunked body to its last chunk; a stream cut before it ends the read early, which the caller sees as no [DONE]. */
        private String chunks() throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            for (String size = line(); size != null; size = line()) {
                int n = Integer.parseInt(size.split(";", 2)[0].trim(), 16);
                if (n == 0) {
                    line();
                    break;
                }
                body.write(in.readNBytes(n));
                line();
            }
            return body.toString(StandardCharsets.UTF_8);
        }

        private String line() throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) != -1 && b != '\n') {
                if (b != '\r') {
                    line.write(b);
                }
            }
            return b == -1 && line.size() == 0 ? null : line.toString(StandardCharsets.US_ASCII);
        }

        /** Waits, at most {@code atMost}, for the server to close this idle connection; whether it did. */
        public synchronized boolean closedByServer(Duration atMost) throws IOException {
            socket.setSoTimeout((int) atMost.toMillis());
            try {
                return in.read() == -1;
            } catch (SocketTimeoutException e) {
                return false;
            } finally {
                socket.setSoTimeout(0);
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
