package dev.ebb.operator.drain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.drain.HookEnding.Kind;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class HookEndingTest {
    record Case(String name, String message, Optional<Kind> kind, String line) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "idle",
                        "ebb drain hook [idle]: returning at 7.0s: idle on two consecutive reads\n",
                        Optional.of(Kind.IDLE),
                        "returning at 7.0s: idle on two consecutive reads"),
                new Case(
                        "the deadline, then the engine's own line after it",
                        "ebb drain hook [deadline]: returning at 25.1s: no read may start after 25s\n"
                                + "SIGTERM at 2026-12-04T03:42:18Z\n",
                        Optional.of(Kind.DEADLINE),
                        "returning at 25.1s: no read may start after 25s"),
                new Case(
                        "nothing to measure",
                        "ebb drain hook [nothing-to-measure]: returning at 6.0s: nothing to measure: refused\n",
                        Optional.of(Kind.NOTHING_TO_MEASURE),
                        "returning at 6.0s: nothing to measure: refused"),
                new Case(
                        "no script",
                        "ebb drain hook [no-script]: cannot run /etc/ebb/drain-hook/drain-hook.py (missing); holding 27s\n",
                        Optional.of(Kind.NO_SCRIPT),
                        "cannot run /etc/ebb/drain-hook/drain-hook.py (missing); holding 27s"),
                new Case(
                        "the last of two endings counts",
                        "ebb drain hook [idle]: first\nebb drain hook [deadline]: second\n",
                        Optional.of(Kind.DEADLINE),
                        "second"),
                new Case(
                        "a kind the hook never writes is unknown, never idle",
                        "ebb drain hook [idle-ish]: trust me\n",
                        Optional.of(Kind.UNKNOWN),
                        "trust me"),
                new Case(
                        "control characters in the line are blanked",
                        "ebb drain hook [deadline]: a\u0007b\u001b[31mc\n",
                        Optional.of(Kind.DEADLINE),
                        "a b [31mc"),
                new Case("an engine's message only", "SIGTERM at 2026-12-04T03:42:18Z\n", Optional.empty(), null),
                new Case(
                        "the form in the middle of a line is not the hook's",
                        "x ebb drain hook [idle]: y\n",
                        Optional.empty(),
                        null),
                new Case("nothing at all", "", Optional.empty(), null),
                new Case("no message", null, Optional.empty(), null),
                new Case(
                        "a message longer than the kubelet ever reports",
                        "ebb drain hook [idle]: " + "x".repeat(5000),
                        Optional.empty(),
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void reads(Case c) {
        Optional<HookEnding> ending = HookEnding.in(c.message());

        assertThat(ending.map(HookEnding::kind)).isEqualTo(c.kind());
        ending.ifPresent(e -> assertThat(e.line()).isEqualTo(c.line()));
        assertThat(ending.map(HookEnding::provenIdle)).isEqualTo(c.kind().map(kind -> kind == Kind.IDLE));
    }

    @org.junit.jupiter.api.Test
    void aLongLineIsCut() {
        String longLine = "y".repeat(1000);

        assertThat(HookEnding.in("ebb drain hook [deadline]: " + longLine)
                        .orElseThrow()
                        .line())
                .hasSize(HookEnding.MAX_LINE)
                .endsWith("…");
    }
}
