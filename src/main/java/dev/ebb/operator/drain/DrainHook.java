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
    /** A leader's hook reads its own engine over loopback from inside its container. */
    public static final String LOOPBACK = "127.0.0.1";
    public static final String SCRIPT = BundledScripts.load(RESOURCE);
    /** What Pods record of the hook they carry; it changes with the script's text and nothing else. */
    public static final String REVISION = revisionOf(SCRIPT);
    /** A hook's command line holds its script here: {@code python3 -c SCRIPT ...}. */
    static final int SCRIPT_INDEX = 2;
    private static final String HOST = "--host";

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
     * The command line with what the operator chose left out: the script's text (its name in its place) and the hosts it
     * reads (one loopback in their place). What remains is everything the spec decided.
     */
    public static List<String> withoutOperatorChoices(List<String> command) {
        if (command.size() <= SCRIPT_INDEX || !"-c".equals(command.get(SCRIPT_INDEX - 1))) {
            return command;
        }
        List<String> without = new ArrayList<>(command.subList(0, SCRIPT_INDEX));
        without.add(RESOURCE);
        boolean hostKept = false;
        for (int i = SCRIPT_INDEX + 1; i < command.size(); i++) {
            if (!HOST.equals(command.get(i)) || i + 1 >= command.size()) {
                without.add(command.get(i));
            } else if (!hostKept) {
                without.addAll(List.of(HOST, LOOPBACK));
                hostKept = true;
                i++;
            } else {
                i++;
            }
        }
        return List.copyOf(without);
    }

    /** The hosts a hook reads, the value after each {@code --host}, in order; empty when its command line names none. */
    public static List<String> hosts(List<String> command) {
        List<String> hosts = new ArrayList<>();
        for (int i = SCRIPT_INDEX + 1; i + 1 < command.size(); i++) {
            if (HOST.equals(command.get(i))) {
                hosts.add(command.get(++i));
            }
        }
        return List.copyOf(hosts);
    }

    /**
     * @param script the hook's text: this release's {@link #SCRIPT}, or another release's
     * @param hosts where the engines that speak for the member's replica serve, their gauges summed: {@link #LOOPBACK}
     *     for a leader, the leader's name for a follower, which serves nothing itself; every member where followers
     *     count requests of their own ({@link FollowerGauges})
     */
    public static List<String> command(String script, DrainTimeline timeline, String scheme, List<String> hosts, int port, String path,
            List<InFlightGauges.Gauge> gauges) {
        int grace = timeline.grace().orElseThrow(() -> new IllegalArgumentException("a hooked role always has a grace"));
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a hook reads at least one host");
        }
        List<String> command = new ArrayList<>(List.of("python3", "-c", script, "--scheme", scheme));
        hosts.forEach(host -> command.addAll(List.of(HOST, host)));
        command.addAll(List.of(
                "--port", Integer.toString(port),
                "--path", path,
                "--grace", Integer.toString(grace),
                "--gauges", InFlightGauges.argument(gauges),
                "--settle", Integer.toString(timeline.settle()),
                "--interval", Integer.toString(timeline.interval()),
                "--read-timeout", Integer.toString(timeline.readTimeout()),
                "--last-read-margin", Integer.toString(timeline.lastReadMargin())));
        return List.copyOf(command);
    }
}
