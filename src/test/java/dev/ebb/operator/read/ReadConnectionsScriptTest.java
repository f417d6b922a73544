package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.LoopbackAddresses;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real connection-read script under python3: against this machine's own /proc/net tables with real sockets,
 * and against tables written by the test for what this machine cannot produce (a global IPv6 peer, a damaged table).
 */
class ReadConnectionsScriptTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    private static final String TCP_HEADING =
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    private static final String TCP6_HEADING =
            "  sl  local_address                         remote_address                        st tx_queue rx_queue tr"
                    + " tm->when retrnsmt   uid  timeout inode\n";

    private final List<AutoCloseable> open = new ArrayList<>();

    @TempDir
    Path tables;

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : open) {
            closeable.close();
        }
    }

    private record Run(int exit, String stdout, String stderr) {}

    private static Run run(List<String> argv) throws Exception {
        return run(argv, new byte[0]);
    }

    private static Run run(List<String> argv, byte[] stdin) throws Exception {
        Path stderr = Files.createTempFile("read-connections", ".err");
        try {
            Process process =
                    LocalProcesses.builder(argv).redirectError(stderr.toFile()).start();
            try (var in = process.getOutputStream()) {
                in.write(stdin);
            }
            String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
            return new Run(process.exitValue(), stdout, Files.readString(stderr));
        } finally {
            Files.delete(stderr);
        }
    }

    private static Run run(String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("python3", "-c", ConnectionRead.SCRIPT));
        argv.addAll(List.of(args));
        return run(argv);
    }

    private ServerSocket listen(InetSocketAddress at) throws IOException {
        ServerSocket server = new ServerSocket();
        server.bind(at);
        open.add(server);
        return server;
    }

    /** A client connection from the given source address, accepted by the server so that both ends are established. */
    private Socket connect(ServerSocket server, InetAddress from, InetAddress to) throws IOException {
        Socket client = new Socket();
        client.bind(new InetSocketAddress(from, 0));
        client.connect(new InetSocketAddress(to, server.getLocalPort()), 2000);
        open.add(client);
        open.add(server.accept());
        return client;
    }

    private static ConnectionRead.Peers interpreted(Run run) {
        return ConnectionRead.interpret(
                new ExecResult.Exited(run.exit(), run.stdout().getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void anIpv4ClientFromAnotherAddressIsCountedAndListed() throws Exception {
        InetAddress engine = InetAddress.getByName(ADDRESSES.next());
        InetAddress client = InetAddress.getByName(ADDRESSES.next());
        ServerSocket server = listen(new InetSocketAddress(engine, 0));
        Socket connection = connect(server, client, engine);

        Run run = run("--port", Integer.toString(server.getLocalPort()), "--local-address", engine.getHostAddress());

        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(interpreted(run))
                .isEqualTo(new ConnectionRead.Peers.Connected(
                        1, List.of(client.getHostAddress() + ":" + connection.getLocalPort())));
    }

    @Test
    void aListeningSocketAloneIsNoPeer() throws Exception {
        InetAddress engine = InetAddress.getByName(ADDRESSES.next());
        ServerSocket server = listen(new InetSocketAddress(engine, 0));

        Run run = run("--port", Integer.toString(server.getLocalPort()), "--local-address", engine.getHostAddress());

        assertThat(interpreted(run)).isEqualTo(new ConnectionRead.Peers.Connected(0, List.of()));
    }

    /** The drain hook and the operator's own reads connect from 127.0.0.1 inside the container: they hold nothing. */
    @Test
    void aClientOnLoopbackItselfIsIgnored() throws Exception {
        InetAddress engine = InetAddress.getByName(ADDRESSES.next());
        ServerSocket server = listen(new InetSocketAddress(engine, 0));
        connect(server, InetAddress.getByName("127.0.0.1"), engine);

        Run run = run("--port", Integer.toString(server.getLocalPort()), "--local-address", engine.getHostAddress());

        assertThat(interpreted(run)).isEqualTo(new ConnectionRead.Peers.Connected(0, List.of()));
    }

    /** A dual-stack listener (how uvicorn binds "::") sees an IPv4 client as ::ffff:a.b.c.d in tcp6. */
    @Test
    void anIpv4ClientOfADualStackListenerIsCountedUnderItsIpv4Address() throws Exception {
        ServerSocket server = listen(new InetSocketAddress(InetAddress.getByName("::"), 0));
        InetAddress client = InetAddress.getByName(ADDRESSES.next());
        Socket connection = connect(server, client, InetAddress.getByName("127.0.0.1"));
        Socket loopbackSix = connect(server, InetAddress.getByName("::1"), InetAddress.getByName("::1"));

        Run run = run("--port", Integer.toString(server.getLocalPort()));

        assertThat(loopbackSix.getLocalAddress()).isInstanceOf(Inet6Address.class);
        assertThat(interpreted(run))
                .isEqualTo(new ConnectionRead.Peers.Connected(
                        1, List.of(client.getHostAddress() + ":" + connection.getLocalPort())));
    }

    @Test
    void connectionsToOtherPortsAndOtherLocalAddressesAreNotCounted() throws Exception {
        InetAddress engine = InetAddress.getByName(ADDRESSES.next());
        InetAddress neighbour = InetAddress.getByName(ADDRESSES.next());
        ServerSocket server = listen(new InetSocketAddress(engine, 0));
        ServerSocket other = listen(new InetSocketAddress(neighbour, server.getLocalPort()));
        connect(other, InetAddress.getByName(ADDRESSES.next()), neighbour);

        Run run = run("--port", Integer.toString(server.getLocalPort()), "--local-address", engine.getHostAddress());

        assertThat(interpreted(run)).isEqualTo(new ConnectionRead.Peers.Connected(0, List.of()));
    }

    @Test
    void anIpv6PeerIsListedInBrackets() throws Exception {
        // 2001:db8::5 port 0xC350 (50000) connected to [2001:db8::1]:0x1F40 (8000), state 01, words in host order
        write("tcp", TCP_HEADING);
        write(
                "tcp6",
                TCP6_HEADING
                        + "   0: " + words("20010db8000000000000000000000001") + ":1F40 "
                        + words("20010db8000000000000000000000005")
                        + ":C350 01 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 20 4 30 10 -1\n");

        Run run = run("--port", "8000", "--tables", tables.toString());

        assertThat(interpreted(run)).isEqualTo(new ConnectionRead.Peers.Connected(1, List.of("[2001:db8::5]:50000")));
    }

    @Test
    void aConnectionBeingAcceptedCountsAndOneClosingDoesNot() throws Exception {
        write(
                "tcp",
                TCP_HEADING
                        + "   0: " + words("0A000001") + ":1F40 " + words("0A000002")
                        + ":C350 03 00000000:00000000 00:00000000 00000000 0 0 1\n"
                        + "   1: " + words("0A000001") + ":1F40 " + words("0A000003")
                        + ":C351 06 00000000:00000000 00:00000000 00000000 0 0 2\n");

        Run run = run("--port", "8000", "--tables", tables.toString());

        assertThat(interpreted(run)).isEqualTo(new ConnectionRead.Peers.Connected(1, List.of("10.0.0.2:50000")));
    }

    @Test
    void moreThanMaxPeersAreCountedButListedOnlyUpToIt() throws Exception {
        StringBuilder table = new StringBuilder(TCP_HEADING);
        for (int i = 0; i < 70; i++) {
            table.append("   ")
                    .append(i)
                    .append(": ")
                    .append(words("0A000001"))
                    .append(":1F40 ")
                    .append(words(String.format("0A0001%02X", i)))
                    .append(":C350 01 00000000:00000000 00:00000000 00000000 0 0 1\n");
        }
        write("tcp", table.toString());

        ExecCommand command = ConnectionRead.command(8000, Optional.empty());
        Run run = run(withTables(command.argv()), command.stdin());

        assertThat(interpreted(run)).isInstanceOfSatisfying(ConnectionRead.Peers.Connected.class, peers -> {
            assertThat(peers.count()).isEqualTo(70);
            assertThat(peers.listed()).hasSize(ConnectionRead.MAX_PEERS).contains("10.0.1.0:50000");
        });
    }

    @Test
    void aKernelWithoutIpv6HasNoTcp6TableAndThatIsNoError() throws Exception {
        write("tcp", TCP_HEADING);

        assertThat(interpreted(run("--port", "8000", "--tables", tables.toString())))
                .isEqualTo(new ConnectionRead.Peers.Connected(0, List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "no tcp table",
                "a table without the kernel's heading",
                "a line with an address that is not hexadecimal",
                "a line cut short",
                "a state that is not hexadecimal",
                "bytes that are not text"
            })
    void aTableThatCannotBeReadWholeExitsSevenAndIsNeverNoPeers(String damage) throws Exception {
        String line = "   0: " + words("0A000001") + ":1F40 " + words("0A000002")
                + ":C350 01 00000000:00000000 00:00000000 00000000 0 0 1\n";
        switch (damage) {
            case "no tcp table" -> write("tcp6", TCP6_HEADING);
            case "a table without the kernel's heading" -> write("tcp", line);
            case "a line with an address that is not hexadecimal" ->
                write("tcp", TCP_HEADING + line.replace(":1F40", ":1G40"));
            case "a line cut short" -> write("tcp", TCP_HEADING + "   0: " + words("0A000001") + ":1F40\n");
            case "a state that is not hexadecimal" -> write("tcp", TCP_HEADING + line.replace(" 01 ", " zz "));
            default -> Files.write(tables.resolve("tcp"), new byte[] {(byte) 0xff, (byte) 0xfe, '\n'});
        }

        Run run = run("--port", "8000", "--tables", tables.toString());

        assertThat(run.exit()).isEqualTo(7);
        assertThat(run.stdout()).isEmpty();
        assertThat(interpreted(run)).isInstanceOf(ConnectionRead.Peers.Unknown.class);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "--port=0",
                "--port=65536",
                "--port=http",
                "--local-address=127.0.0.1;rm",
                "--max-peers=-1",
                "--unknown=1"
            })
    void badArgumentsExitSeven(String argument) throws Exception {
        List<String> argv = new ArrayList<>(List.of("python3", "-c", ConnectionRead.SCRIPT));
        if (!argument.startsWith("--port")) {
            argv.add("--port=8000");
        }
        argv.add(argument);

        Run run = run(argv);

        assertThat(run.exit()).isEqualTo(7);
        assertThat(run.stdout()).isEmpty();
    }

    private List<String> withTables(List<String> argv) {
        List<String> withTables = new ArrayList<>(argv);
        withTables.addAll(List.of("--tables", tables.toString()));
        return withTables;
    }

    private void write(String table, String text) throws IOException {
        Files.writeString(tables.resolve(table), text, StandardCharsets.US_ASCII);
    }

    /** An address's bytes as the kernel prints them: each 32-bit word as a number in the host's (little-endian) order. */
    private static String words(String bigEndianHex) {
        StringBuilder printed = new StringBuilder();
        for (int word = 0; word < bigEndianHex.length(); word += 8) {
            for (int octet = 6; octet >= 0; octet -= 2) {
                printed.append(bigEndianHex, word + octet, word + octet + 2);
            }
        }
        return printed.toString();
    }
}
