package dev.ebb.operator.read;

import dev.ebb.operator.BundledScripts;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A member's connection table, read with {@code ebb/read-connections.py} in its own container: how many clients are
 * still connected to the port its Service targets. The command takes only numbers and an address it checks; the
 * answer is read strictly, and whatever does not read as the script's own output is a failure, never "no peers".
 * Pure.
 */
public final class ConnectionRead {
    public static final String RESOURCE = "ebb/read-connections.py";
    public static final String SCRIPT = BundledScripts.load(RESOURCE);
    /** Peers listed at most; the count covers them all. */
    public static final int MAX_PEERS = 64;
    /** The read's own option, which no other command the operator runs takes. */
    public static final String MAX_PEERS_OPTION = "--max-peers";

    private static final Pattern COUNT = Pattern.compile("peers (0|[1-9][0-9]{0,8})");
    private static final Pattern PEER =
            Pattern.compile("(\\[[0-9a-f:.]{2,45}]|[0-9]{1,3}(\\.[0-9]{1,3}){3}):[0-9]{1,5}");

    /** What a connection read came to. */
    public sealed interface Peers {
        /** The clients connected, and up to {@link #MAX_PEERS} of their addresses. */
        record Connected(int count, List<String> listed) implements Peers {
            public Connected {
                listed = List.copyOf(listed);
            }
        }

        /** The table could not be read; the member is not known to be free of clients. */
        record Unknown(String why) implements Peers {}
    }

    private ConnectionRead() {}

    /** @param localAddress only connections to this address count; for namespaces several servers share */
    public static ExecCommand command(int port, Optional<String> localAddress) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is not 1..65535");
        }
        List<String> arguments = new ArrayList<>(
                List.of("--port", Integer.toString(port), MAX_PEERS_OPTION, Integer.toString(MAX_PEERS)));
        localAddress.ifPresent(address -> arguments.addAll(List.of("--local-address", address)));
        return ExecCommand.python(SCRIPT, arguments);
    }

    public static Peers interpret(ExecResult result) {
        if (result instanceof ExecResult.Exited exited) {
            if (exited.code() != 0) {
                return new Peers.Unknown("the connection read exited with code " + exited.code());
            }
            return parse(new String(exited.stdout(), StandardCharsets.UTF_8));
        }
        if (result instanceof ExecResult.Overflowed overflowed) {
            return new Peers.Unknown("the connection read printed more than " + overflowed.capBytes() + " bytes");
        }
        if (result instanceof ExecResult.TimedOut timedOut) {
            return new Peers.Unknown("the connection read took longer than "
                    + timedOut.deadline().toSeconds() + " s");
        }
        return new Peers.Unknown("exec failed: " + ((ExecResult.Failed) result).why());
    }

    static Peers parse(String output) {
        if (!output.endsWith("\n")) {
            return new Peers.Unknown("the connection read's output is cut");
        }
        String[] lines = output.substring(0, output.length() - 1).split("\n", -1);
        if (!COUNT.matcher(lines[0]).matches()) {
            return new Peers.Unknown("the connection read's output does not start with its count");
        }
        int count = Integer.parseInt(lines[0].substring("peers ".length()));
        int listed = lines.length - 1;
        if (listed != Math.min(count, MAX_PEERS)) {
            return new Peers.Unknown("the connection read counted " + count + " peers and listed " + listed);
        }
        List<String> peers = new ArrayList<>();
        for (int i = 1; i < lines.length; i++) {
            if (!PEER.matcher(lines[i]).matches()) {
                return new Peers.Unknown("the connection read listed a peer it should not: " + abbreviated(lines[i]));
            }
            peers.add(lines[i]);
        }
        return new Peers.Connected(count, peers);
    }

    private static String abbreviated(String text) {
        return text.length() <= 60 ? text : text.substring(0, 60) + "…";
    }
}
