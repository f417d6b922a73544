package dev.ebb.operator.drain;

import dev.ebb.operator.BundledScripts;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The preStop hook's command line: the engine image's own python3 running the bundled script, every parameter a
 * separate argv item. Nothing is interpolated into code or a shell.
 */
public final class DrainHook {
    public static final String RESOURCE = "ebb/drain-hook.py";
    /** A leader's hook reads its own engine over loopback from inside its container. */
    public static final String LOOPBACK = "127.0.0.1";
    public static final String SCRIPT = BundledScripts.load(RESOURCE);
    /** What Pods record of the hook they carry; it changes with the script's text and nothing else. */
    public static final String REVISION = revisionOf(SCRIPT);
    /** A hook's command line holds its script here: {@code python3 -c SCRIPT ...}. */
    static final int SCRIPT_INDEX = 2;

    private static final int REVISION_HEX_LENGTH = 10;

    private DrainHook() {
    }

    /** A short digest of a hook script's text. */
    public static String revisionOf(String script) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(script.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest).substring(0, REVISION_HEX_LENGTH);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * The command line with what the operator chose left out: the script's text (its name in its place) and the host it
     * reads (loopback in its place). What remains is everything the spec decided.
     */
    public static List<String> withoutOperatorChoices(List<String> command) {
        if (command.size() <= SCRIPT_INDEX || !"-c".equals(command.get(SCRIPT_INDEX - 1))) {
            return command;
        }
        List<String> without = new ArrayList<>(command);
        without.set(SCRIPT_INDEX, RESOURCE);
        int host = without.indexOf("--host");
        if (host > SCRIPT_INDEX && host + 1 < without.size()) {
            without.set(host + 1, LOOPBACK);
        }
        return List.copyOf(without);
    }

    /** The host a hook reads, the value after {@code --host}; empty when its command line names none. */
    public static Optional<String> host(List<String> command) {
        int host = command.indexOf("--host");
        return host > SCRIPT_INDEX && host + 1 < command.size() ? Optional.of(command.get(host + 1)) : Optional.empty();
    }

    /**
     * @param script the hook's text: this release's {@link #SCRIPT}, or another release's
     * @param host where the engine that speaks for the member serves: {@link #LOOPBACK} for a leader, the leader's
     *     name for a follower, which serves nothing itself
     */
    public static List<String> command(String script, DrainTimeline timeline, String scheme, String host, int port, String path,
            List<InFlightGauges.Gauge> gauges) {
        int grace = timeline.grace().orElseThrow(() -> new IllegalArgumentException("a hooked role always has a grace"));
        return List.of("python3", "-c", script,
                "--scheme", scheme,
                "--host", host,
                "--port", Integer.toString(port),
                "--path", path,
                "--grace", Integer.toString(grace),
                "--gauges", InFlightGauges.argument(gauges),
                "--settle", Integer.toString(timeline.settle()),
                "--interval", Integer.toString(timeline.interval()),
                "--read-timeout", Integer.toString(timeline.readTimeout()),
                "--last-read-margin", Integer.toString(timeline.lastReadMargin()));
    }
}
