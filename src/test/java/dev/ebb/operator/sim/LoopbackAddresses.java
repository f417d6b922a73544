package dev.ebb.operator.sim;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hands out 127.0.x.y addresses, one per Pod, so that many Pods can listen on the same engine port. The counter is
 * shared by every user in the JVM: an engine some other test has not yet stopped never collides with a new one.
 * Another JVM on the same machine (a second build, a benchmark) starts elsewhere with {@code -Debb-sim.loopback-start}
 * (outside the {@code ebb.} prefix, whose names the operator's configuration owns).
 */
public final class LoopbackAddresses {
    private static final int START = Integer.getInteger("ebb-sim.loopback-start", 2);
    private static final AtomicInteger NEXT = new AtomicInteger(START);
    private static final AtomicInteger NEXT_BESIDE = new AtomicInteger(START);

    private final AtomicInteger next;
    private final int block;

    public LoopbackAddresses() {
        this(NEXT, 0);
    }

    private LoopbackAddresses(AtomicInteger next, int block) {
        this.next = next;
        this.block = block;
    }

    /**
     * 127.1.x.y, for a test class that runs beside others. A Quarkus test loads this class again in its own class
     * loader, with a counter of its own, so only a separate block keeps its world's engines off these addresses.
     */
    public static LoopbackAddresses besideOtherTests() {
        return new LoopbackAddresses(NEXT_BESIDE, 1);
    }

    public String next() {
        int n = next.getAndIncrement();
        if (n >= 256 * 254) {
            throw new IllegalStateException("out of loopback addresses");
        }
        return "127." + block + "." + (n / 254) + "." + (1 + n % 254);
    }
}
