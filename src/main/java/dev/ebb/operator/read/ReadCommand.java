package dev.ebb.operator.read;

import dev.ebb.operator.BundledScripts;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.EnginePod;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The command of one member read, built from the member Pod's own scrape annotations. Those come from outside
 * (anyone who can edit the Pod), so each is checked before it becomes an argv item, and a Pod whose annotations
 * do not check out is not read at all.
 */
public final class ReadCommand {
    public static final String RESOURCE = "ebb/read-metrics.py";
    public static final String SCRIPT = BundledScripts.load(RESOURCE);
    public static final int TIMEOUT_SECONDS = 2;
    private static final Pattern PATH = Pattern.compile("/[A-Za-z0-9._~/-]{0,255}");

    /** Either the command to run, or why the member cannot be read. */
    public record Built(Optional<ExecCommand> command, String refusal) {}

    private ReadCommand() {}

    public static Built forMember(Pod pod, int maxBytes) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations() == null
                ? Map.of()
                : pod.getMetadata().getAnnotations();
        String port = annotations.get(Annotations.SCRAPE_PORT);
        if (port == null
                || !port.matches("[0-9]{1,5}")
                || Integer.parseInt(port) < 1
                || Integer.parseInt(port) > 65535) {
            return refused("annotation " + Annotations.SCRAPE_PORT + " is not a port number 1..65535");
        }
        String scheme = annotations.getOrDefault(Annotations.SCRAPE_SCHEME, "http");
        if (!scheme.equals("http") && !scheme.equals("https")) {
            return refused("annotation " + Annotations.SCRAPE_SCHEME + " is neither http nor https");
        }
        String path = annotations.getOrDefault(Annotations.SCRAPE_PATH, "/metrics");
        if (!PATH.matcher(path).matches()) {
            return refused("annotation " + Annotations.SCRAPE_PATH + " is not a plain URL path");
        }
        return new Built(
                Optional.of(ExecCommand.python(
                        SCRIPT,
                        List.of(
                                "--scheme",
                                scheme,
                                // the read runs inside the member's own container, so the engine is on loopback
                                "--host",
                                EnginePod.LOOPBACK,
                                "--port",
                                Integer.toString(Integer.parseInt(port)),
                                "--path",
                                path,
                                "--max-bytes",
                                Integer.toString(maxBytes),
                                "--timeout",
                                Integer.toString(TIMEOUT_SECONDS)))),
                null);
    }

    private static Built refused(String why) {
        return new Built(Optional.empty(), why);
    }
}
