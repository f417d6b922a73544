package dev.ebb.operator.drain;

import dev.ebb.operator.BundledScripts;
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

    private DrainHook() {
    }

    public static List<String> command(DrainTimeline timeline, String scheme, int port, String path, List<String> gauges) {
        int grace = timeline.grace().orElseThrow(() -> new IllegalArgumentException("a hooked role always has a grace"));
        return List.of("python3", "-c", SCRIPT,
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
