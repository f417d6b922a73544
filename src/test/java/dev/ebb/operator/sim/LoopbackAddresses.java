package dev.ebb.operator.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
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

    private static final AtomicInteger NEXT_ON_POD_NETWORK = new AtomicInteger(START);
    /** A Pod network of the kind clusters use, which a real API server takes in an EndpointSlice. */
    static final String POD_NETWORK = "10.244.";

    private final String network;
    private final AtomicInteger next;
    private final boolean assign;

    /** 127.0.x.y addresses, which the mock API server and every local socket take as they are. */
    public LoopbackAddresses() {
        this("127.0.", NEXT, false);
    }

    private LoopbackAddresses(String network, AtomicInteger next, boolean assign) {
        this.network = network;
        this.next = next;
        this.assign = assign;
    }

    /**
     * 10.244.x.y addresses, each added to the loopback interface before it is handed out, so that local processes
     * reach each other on it as on 127.0.x.y. A real API server refuses a loopback address in an EndpointSlice
     * ("may not be in the loopback range", kube-apiserver v1.37.2), so Pods of a real cluster need these. Adding an
     * address needs root and iproute2's {@code ip}.
     */
    public static LoopbackAddresses podNetwork() {
        return new LoopbackAddresses(POD_NETWORK, NEXT_ON_POD_NETWORK, true);
    }

    /**
     * The address that stands for 127.0.0.1 inside the Pod at {@code podAddress}. A Pod of a cluster has a loopback
     * of its own; here every Pod shares the machine's, so a Pod on the pod network gets 127.244.x.y for its 10.244.x.y,
     * which is in 127.0.0.0/8 (on the loopback interface without being added) and is never handed out as a Pod's
     * address. A 127.0.x.y Pod is already on loopback, and is its own stand-in.
     */
    public static String loopbackOf(String podAddress) {
        return podAddress.startsWith(POD_NETWORK)
                ? "127.244." + podAddress.substring(POD_NETWORK.length())
                : podAddress;
    }

    public String next() {
        while (true) {
            int n = next.getAndIncrement();
            if (n >= END) {
                throw new IllegalStateException("out of addresses in " + network + "0.0/16");
            }
            String address = network + (n / 254) + "." + (1 + n % 254);
            if (assign) {
                addToLoopback(address);
            }
            if (claim(address)) {
                return address;
            }
        }
    }

    private static void addToLoopback(String address) {
        try {
            Process ip = new ProcessBuilder("ip", "addr", "add", address + "/32", "dev", "lo")
                    .redirectErrorStream(true)
                    .start();
            String said = new String(ip.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            // present already, from an earlier run on this machine: as good as added (iproute2 6.1 says "Address
            // already assigned", older releases "File exists")
            if (ip.waitFor() != 0 && !said.contains("already assigned") && !said.contains("File exists")) {
                throw new IllegalStateException(
                        "cannot add " + address + " to the loopback interface (root and iproute2 needed): " + said);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run ip to add " + address + " to the loopback interface", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted adding " + address, e);
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
