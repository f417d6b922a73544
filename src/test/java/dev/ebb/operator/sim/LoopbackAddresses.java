package dev.ebb.operator.sim;

import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hands out 127.0.x.y addresses, one per Pod, so that many Pods can listen on the same engine port.
 *
 * <p>No two users on this machine get the same address, whichever class loader or JVM they run in: an address is
 * handed out only once this class holds a UDP socket bound to it on {@link #CLAIM_PORT}, which the kernel lets one
 * socket hold at a time, and one someone else holds is skipped. A counter alone cannot promise that: a Quarkus test
 * loads this class again in a class loader of its own, whose counter starts over, so its world's engines and those
 * of the plain tests beside or after it were given the same addresses, and whichever bound the engine port second
 * failed ("Address already in use", or a Pod the kubelet never reported with an address). A TCP server on the address
 * is unaffected: UDP ports are apart from TCP ones.
 *
 * <p>A claim lasts as long as the class loader that made it. Counting starts at {@code -Debb-sim.loopback-start}
 * (outside the {@code ebb.} prefix, whose names the operator's configuration owns), so that a second build running
 * at the same time skips few addresses.
 */
public final class LoopbackAddresses {
    /** Above Linux's default ephemeral range (32768-60999), so that no socket bound to port 0 takes it first. */
    static final int CLAIM_PORT = 61999;
    private static final int START = Integer.getInteger("ebb-sim.loopback-start", 2);
    private static final int END = 256 * 254;
    private static final AtomicInteger NEXT = new AtomicInteger(START);
    /** Held for good: a claim socket that was collected would be closed, and its address handed out again. */
    private static final List<DatagramSocket> CLAIMS = new CopyOnWriteArrayList<>();

    public String next() {
        while (true) {
            int n = NEXT.getAndIncrement();
            if (n >= END) {
                throw new IllegalStateException("out of loopback addresses");
            }
            String address = "127.0." + (n / 254) + "." + (1 + n % 254);
            if (claim(address)) {
                return address;
            }
        }
    }

    private static boolean claim(String address) {
        try {
            CLAIMS.add(new DatagramSocket(new InetSocketAddress(address, CLAIM_PORT)));
            return true;
        } catch (BindException e) {
            return false;
        } catch (SocketException e) {
            throw new UncheckedIOException("cannot claim " + address, e);
        }
    }
}
