package dev.ebb.operator.sim;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hands out 127.0.x.y addresses, one per Pod, so that many Pods can listen on the same engine port. The counter is
 * shared by every user in the JVM: an engine some other test has not yet stopped never collides with a new one.
 * Another JVM on the same machine (a second build, a benchmark) starts elsewhere with {@code -Debb-sim.loopback-start}
 * (outside the {@code ebb.} prefix, whose names the operator's configuration owns).
 */
public final class LoopbackAddresses {
    private static final AtomicInteger NEXT = new AtomicInteger(Integer.getInteger("ebb-sim.loopback-start", 2));

    public String next() {
        int n = NEXT.getAndIncrement();
        if (n >= 256 * 254) {
            throw new IllegalStateException("out of loopback addresses");
        }
        return "127.0." + (n / 254) + "." + (1 + n % 254);
    }
}
