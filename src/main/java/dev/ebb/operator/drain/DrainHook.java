package dev.ebb.operator.drain;

import dev.ebb.operator.BundledScripts;
import dev.ebb.operator.api.EnginePod;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The preStop hook's command line: the engine image's own python3 running the hook script from a ConfigMap the operator
 * mounts, every parameter a separate argv item. The script's text stays out of the Pod: the Pod object, every cache
 * that holds it and {@code kubectl describe} carry a path instead of 16 KB. A short loader, the one piece of code in
 * the command, runs the file and, when the file cannot be read or compiled (the ConfigMap deleted before the kubelet
 * mounted it, a key missing), holds the Pod as a busy engine would until the hook's own deadline, so that a missing
 * script never turns a drain into an immediate SIGTERM. Nothing is interpolated into code or a shell.
 */
public final class DrainHook {
    public static final String RESOURCE = "ebb/drain-hook.py";
    /** The file's name in the ConfigMap and under the mount. */
    public static final String FILE = "drain-hook.py";
    /** Where the engine container mounts the hook's ConfigMap. */
    public static final String MOUNT_PATH = "/etc/ebb/drain-hook";
    /** A leader's hook reads its own engine over loopback from inside its container. */
    public static final String SCRIPT = BundledScripts.load(RESOURCE);
    /** What Pods record of the hook they carry; it changes with the script's text and nothing else. */
    public static final String REVISION = revisionOf(SCRIPT);
    /**
     * Runs the script at argv[1] with the hook's arguments from argv[3] on; when it cannot, holds argv[2] seconds and
     * returns, which the kubelet takes as the hook's end. It never fails: a failed hook would bring SIGTERM at once.
     */
    static final String LOADER = """
            import sys, time
            a = sys.argv
            try:
                path, hold = a[1], float(a[2])
            except Exception:
                path, hold = "?", 0.0
            try:
                code = compile(open(path, "rb").read(), path, "exec")
            except BaseException as e:
                said = "cannot run %s (%s); holding %gs as a busy engine would" % (path, e, hold)
                sys.stderr.write("ebb drain hook: " + said + "\\n")
                for flag, line in (("--container-log", "ebb drain hook: "), ("--termination-log", "ebb drain hook [no-script]: ")):
                    try:
                        open(a[a.index(flag) + 1], "a").write(line + said + "\\n")
                    except Exception:
                        pass
                time.sleep(hold)
                sys.exit(0)
            sys.argv = [path] + a[3:]
            exec(code, {"__name__": "__main__"})
            """;
    /**
     * Where the hook's lines reach the container's log: its main process's stderr. The kubelet keeps an exec hook's own
     * output only when the hook fails, and this one never does.
     */
    public static final String CONTAINER_LOG = "/proc/1/fd/2";
    /** The container's termination message file (Kubernetes' default path), where the hook appends how it ended. */
    public static final String TERMINATION_LOG = "/dev/termination-log";

    private static final List<String> OPERATOR_OPTIONS = List.of("--container-log", "--termination-log");
    /** A command line of this shape holds its script's text here: {@code python3 -c SCRIPT ...} (older releases). */
    static final int SCRIPT_INDEX = 2;
    /** The first of the hook's own arguments in the loader's command line. */
    private static final int LOADED_ARGUMENTS = 5;

    private static final String HOST = "--host";

    private static final int REVISION_HEX_LENGTH = 10;

    private DrainHook() {}

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
        // a loaded script's path and hold are the operator's too; what follows is what older releases put after the
        // text
        int first = loaded(command) ? LOADED_ARGUMENTS : SCRIPT_INDEX + 1;
        for (int i = first; i < command.size(); i++) {
            if (OPERATOR_OPTIONS.contains(command.get(i))) {
                i++;
            } else if (!HOST.equals(command.get(i)) || i + 1 >= command.size()) {
                without.add(command.get(i));
            } else if (!hostKept) {
                without.addAll(List.of(HOST, EnginePod.LOOPBACK));
                hostKept = true;
                i++;
            } else {
                i++;
            }
        }
        return List.copyOf(without);
    }

    /**
     * Whether the command runs a mounted script through a loader, as this release renders it: the script's path and the
     * hold follow the code, whatever the loader's own text (a later release may change it without turning replicas over).
     */
    private static boolean loaded(List<String> command) {
        return command.size() >= LOADED_ARGUMENTS
                && command.get(SCRIPT_INDEX + 1).endsWith("/" + FILE)
                && command.get(SCRIPT_INDEX + 2).matches("[0-9]{1,9}");
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
     * The command line the operator renders: the loader, the mounted script and how long to hold should it be unreadable
     * (until the latest moment the hook itself would return), where its lines and its ending go, then {@link #arguments}.
     */
    public static List<String> command(
            DrainTimeline timeline,
            String scheme,
            List<String> hosts,
            int port,
            String path,
            List<InFlightGauges.Gauge> gauges) {
        List<String> command = new ArrayList<>(List.of(
                "python3",
                "-c",
                LOADER,
                MOUNT_PATH + "/" + FILE,
                Integer.toString(timeline.sigtermBy()),
                "--container-log",
                CONTAINER_LOG,
                "--termination-log",
                TERMINATION_LOG));
        command.addAll(arguments(timeline, scheme, hosts, port, path, gauges));
        return List.copyOf(command);
    }

    /**
     * The hook script's own arguments, as any way of running it takes them ({@code python3 drain-hook.py ARGUMENTS}).
     *
     * @param hosts where the engines that speak for the member's replica serve, their gauges summed: {@link EnginePod#LOOPBACK}
     *     for a leader, the leader's name for a follower, which serves nothing itself; every member where followers
     *     count requests of their own ({@link FollowerGauges})
     */
    public static List<String> arguments(
            DrainTimeline timeline,
            String scheme,
            List<String> hosts,
            int port,
            String path,
            List<InFlightGauges.Gauge> gauges) {
        int grace =
                timeline.grace().orElseThrow(() -> new IllegalArgumentException("a hooked role always has a grace"));
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a hook reads at least one host");
        }
        List<String> arguments = new ArrayList<>(List.of("--scheme", scheme));
        hosts.forEach(host -> arguments.addAll(List.of(HOST, host)));
        arguments.addAll(List.of(
                "--port", Integer.toString(port),
                "--path", path,
                "--grace", Integer.toString(grace),
                "--gauges", InFlightGauges.argument(gauges),
                "--settle", Integer.toString(timeline.settle()),
                "--interval", Integer.toString(timeline.interval()),
                "--read-timeout", Integer.toString(timeline.readTimeout()),
                "--last-read-margin", Integer.toString(timeline.lastReadMargin())));
        return List.copyOf(arguments);
    }
}
