package dev.ebb.operator.sim;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A listener that is no engine: it answers every connection with the same bytes once it has read a request (or a
 * TLS hello), then closes it, and keeps what it was sent. For answers a fake engine would never give.
 */
public final class CannedListener implements AutoCloseable {
    private final ServerSocket socket;
    private final List<String> requests = new CopyOnWriteArrayList<>();

    /** @param port 0 for any free port */
    public CannedListener(String address, int port, byte[] answer) throws IOException {
        this(address, port, answer, new byte[0], Duration.ZERO);
    }

    private CannedListener(String address, int port, byte[] head, byte[] tail, Duration pausePerTailByte)
            throws IOException {
        socket = new ServerSocket(port, 50, InetAddress.getByName(address));
        DaemonThreads.named("canned-listener")
                .newThread(() -> serve(head, tail, pausePerTailByte))
                .start();
    }

    public CannedListener(String address, int port, String answer) throws IOException {
        this(address, port, answer.getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * Sends the head at once and then the tail a byte at a time with a pause before each, as a server that stalls
     * halfway through its answer would.
     */
    public static CannedListener dripping(String address, String head, String tail, Duration pausePerTailByte)
            throws IOException {
        return new CannedListener(
                address,
                0,
                head.getBytes(StandardCharsets.ISO_8859_1),
                tail.getBytes(StandardCharsets.ISO_8859_1),
                pausePerTailByte);
    }

    private void serve(byte[] head, byte[] tail, Duration pausePerTailByte) {
        while (!socket.isClosed()) {
            try (Socket connection = socket.accept()) {
                requests.add(readRequest(connection.getInputStream()));
                connection.getOutputStream().write(head);
                for (byte b : tail) {
                    Thread.sleep(pausePerTailByte.toMillis());
                    connection.getOutputStream().write(b);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException e) {
                // closed, or the client hung up first: the next connection gets the same answer
            }
        }
    }

    private static String readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        int n;
        while ((n = in.read(buffer)) > 0) {
            request.write(buffer, 0, n);
            String text = request.toString(StandardCharsets.ISO_8859_1);
            // a TLS record starts with 0x16 and never holds an empty line to wait for
            if (text.contains("\r\n\r\n") || text.charAt(0) == 0x16) {
                break;
            }
        }
        return request.toString(StandardCharsets.ISO_8859_1);
    }

    /** What each connection sent, in order. */
    public List<String> requests() {
        return List.copyOf(requests);
    }

    public String host() {
        return socket.getInetAddress().getHostAddress();
    }

    public int port() {
        return socket.getLocalPort();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
