package dev.ebb.operator.sim;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Traffic every real engine Pod gets that carries no generation, straight to the Pod's address from a source address
 * of its own: a metrics scraper, or the kubelet's probes.
 */
public final class Bystander implements AutoCloseable {
    private final String pod;
    private final String address;
    private final int port;
    private final String sourceAddress;
    private final String path;
    private final boolean keepAlive;
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong opened = new AtomicLong();
    private final ScheduledExecutorService ticks =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("bystander"));
    private KubeProxyService.Connection kept;

    private Bystander(
            String pod,
            String address,
            int port,
            String sourceAddress,
            String path,
            boolean keepAlive,
            Duration every) {
        this.pod = pod;
        this.address = address;
        this.port = port;
        this.sourceAddress = sourceAddress;
        this.path = path;
        this.keepAlive = keepAlive;
        ticks.scheduleAtFixedRate(this::once, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Prometheus scraping the Pod: one kept-alive HTTP/1.1 connection reused from scrape to scrape, and a new one when
     * the engine has closed it (prometheus/common config/http_config.go at v0.70.1, which Prometheus v3.14.0 pins:
     * keep-alives on, idle connections kept 5 minutes).
     */
    public static Bystander scraper(String pod, String address, int port, String sourceAddress, Duration every) {
        return new Bystander(pod, address, port, sourceAddress, "/metrics", true, every);
    }

    /**
     * The kubelet's HTTP probe: a new connection for each probe, closed after its answer (pkg/probe/http/http.go at
     * Kubernetes v1.37.2: DisableKeepAlives), from the node's address.
     */
    public static Bystander prober(String pod, String address, int port, String nodeAddress, Duration every) {
        return new Bystander(pod, address, port, nodeAddress, "/health", false, every);
    }

    private synchronized void once() {
        try {
            if (kept == null) {
                kept = KubeProxyService.Connection.open(pod, address, port, sourceAddress);
                opened.incrementAndGet();
            }
            kept.get(path, keepAlive);
            answered.incrementAndGet();
            if (!keepAlive) {
                drop();
            }
        } catch (IOException e) {
            // the engine closed the kept connection, or is gone: the next look opens a new one
            drop();
        }
    }

    private void drop() {
        if (kept != null) {
            try {
                kept.close();
            } catch (IOException e) {
                // closing a broken socket tells nothing more
            }
            kept = null;
        }
    }

    /** Requests that got an answer. */
    public long answered() {
        return answered.get();
    }

    /** Connections opened to the Pod so far. */
    public long connectionsOpened() {
        return opened.get();
    }

    @Override
    public void close() {
        ticks.shutdownNow();
        synchronized (this) {
            drop();
        }
    }
}
