package dev.ebb.operator.drain;

import dev.ebb.operator.BundledScripts;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The preStop hook's command line: the engine image's own python3 running the bundled script, every parameter a
 * separate argv item. Nothing is interpolated into code or a shell.
 */
public final class DrainHook {
    public static final String RESOURCE = "ebb/drain-hook.py";
    /** The hook reads the engine over loopback from inside its own container. */
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

    /** The command line with the script's text left out and its name in its place: everything the spec decided. */
    public static List<String> withoutScriptText(List<String> command) {
        if (command.size() <= SCRIPT_INDEX || !"-c".equals(command.get(SCRIPT_INDEX - 1))) {
            return command;
        }
        List<String> without = new ArrayList<>(command);
        without.set(SCRIPT_INDEX, RESOURCE);
        return List.copyOf(without);
    }

    /** @param script the hook's text: this release's {@link #SCRIPT}, or another release's */
    public static List<String> command(String script, DrainTimeline timeline, String scheme, int port, String path, List<String> gauges) {
        int grace = timeline.grace().orElseThrow(() -> new IllegalArgumentException("a hooked role always has a grace"));
        return List.of("python3", "-c", script,
                "--scheme", scheme,
                "--host", LOOPBACK,
                "--port", Integer.toString(port),
                "--path", path,
                "--grace", Integer.toString(grace),
                "--gauges", String.join(",", gauges),
                "--settle", Integer.toString(timeline.settle()),
                "--interval", Integer.toString(timeline.interval()),
                "--read-timeout", Integer.toString(timeline.readTimeout()),
                "--last-read-margin", Integer.toString(timeline.lastReadMargin()));
    }
}
