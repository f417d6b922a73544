package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConnectionReadTest {
    private static ConnectionRead.Peers exited(int code, String stdout) {
        return ConnectionRead.interpret(new ExecResult.Exited(code, stdout.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void theScriptsOwnOutputReadsAsItsPeers() {
        assertThat(exited(0, "peers 0\n")).isEqualTo(new ConnectionRead.Peers.Connected(0, List.of()));
        assertThat(exited(0, "peers 2\n10.0.0.2:50000\n[2001:db8::5]:443\n"))
                .isEqualTo(new ConnectionRead.Peers.Connected(2, List.of("10.0.0.2:50000", "[2001:db8::5]:443")));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "peers 0",
                "peers 1\n",
                "peers 0\n10.0.0.2:1\n",
                "peers -1\n",
                "peers 01\n10.0.0.2:1\n",
                "peers 99999999999\n",
                "Peers 0\n",
                "peers 1\n10.0.0.2:1; rm -rf /\n",
                "peers 1\n<script>\n",
                "peers 1\n10.0.0.2:1\n\n",
                "idle\n"
            })
    void anythingElseIsUnknownNeverNoPeers(String stdout) {
        assertThat(exited(0, stdout)).isInstanceOf(ConnectionRead.Peers.Unknown.class);
    }

    @Test
    void aFailedExecOrANonZeroExitIsUnknown() {
        assertThat(exited(7, "")).isInstanceOf(ConnectionRead.Peers.Unknown.class);
        assertThat(ConnectionRead.interpret(new ExecResult.TimedOut(Duration.ofSeconds(5))))
                .isInstanceOf(ConnectionRead.Peers.Unknown.class);
        assertThat(ConnectionRead.interpret(new ExecResult.Overflowed(65536)))
                .isInstanceOf(ConnectionRead.Peers.Unknown.class);
        assertThat(ConnectionRead.interpret(new ExecResult.Failed("container not found")))
                .isInstanceOf(ConnectionRead.Peers.Unknown.class);
    }

    @Test
    void theCommandCarriesOnlyCheckedValuesEachAsItsOwnArgument() {
        assertThat(ConnectionRead.command(8000, Optional.of("10.1.2.3")))
                .isEqualTo(ExecCommand.python(
                        ConnectionRead.SCRIPT,
                        List.of("--port", "8000", "--max-peers", "64", "--local-address", "10.1.2.3")));
        assertThatThrownBy(() -> ConnectionRead.command(0, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ConnectionRead.command(65536, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
