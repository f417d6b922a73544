package dev.ebb.operator.read;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A command run in a container and the bytes it is given on stdin. A bundled script travels on stdin, behind a loader
 * of a few hundred bytes, rather than in the argv: the argv is the exec request's query string, which audit logs keep
 * whole and proxies with a request-line limit refuse, and it would grow with every script. The exec protocol the
 * client speaks cannot close stdin, so the script comes with its length and the loader reads exactly that much. Pure.
 */
public record ExecCommand(List<String> argv, byte[] stdin) {
    /**
     * Reads the script's length and then the script from stdin, and runs it as the main module with the arguments that
     * follow it. A short or unreadable stdin exits non-zero, which no reader takes for an answer.
     */
    static final String LOADER = """
            import sys
            n = int(sys.stdin.buffer.readline(16))
            s = sys.stdin.buffer.read(max(n, 0))
            if len(s) != n:
                sys.exit("ebb: the script was cut at %d of %d bytes" % (len(s), n))
            exec(compile(s, "<ebb>", "exec"), {"__name__": "__main__"})
            """;

    public ExecCommand {
        argv = List.copyOf(argv);
        stdin = stdin.clone();
    }

    /** A command that reads nothing on stdin. */
    public static ExecCommand of(List<String> argv) {
        return new ExecCommand(argv, new byte[0]);
    }

    /** {@code python3} running {@code script} with {@code arguments}, the script on stdin. */
    public static ExecCommand python(String script, List<String> arguments) {
        List<String> argv = new ArrayList<>(List.of("python3", "-c", LOADER));
        argv.addAll(arguments);
        byte[] text = script.getBytes(StandardCharsets.UTF_8);
        byte[] header = (text.length + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] stdin = Arrays.copyOf(header, header.length + text.length);
        System.arraycopy(text, 0, stdin, header.length, text.length);
        return new ExecCommand(argv, stdin);
    }

    @Override
    public byte[] stdin() {
        return stdin.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ExecCommand that && argv.equals(that.argv) && Arrays.equals(stdin, that.stdin);
    }

    @Override
    public int hashCode() {
        return 31 * argv.hashCode() + Arrays.hashCode(stdin);
    }

    @Override
    public String toString() {
        return "ExecCommand" + argv + " with " + stdin.length + " bytes on stdin";
    }
}
