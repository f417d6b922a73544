package dev.ebb.operator.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.ExecCommand;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.ReadCommand;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What the operator's objects and requests weigh: a rendered engine Pod as JSON, with the hook's script mounted from
 * its ConfigMap (as rendered) and with the script in its command (as releases before did); and the request line of
 * each member read's pods/exec, the scripts on stdin (as sent) and in the query string (as before).
 */
public final class ObjectSizes {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ObjectSizes() {}

    static void run() throws Exception {
        DesiredDeployment d = Specs.deployment("qwen", "vLLM")
                .namespace("serving")
                .role(Specs.role("server"))
                .desired();
        PodRenderer renderer = new PodRenderer();
        Pod mounted = renderer.render(
                new MemberSlot(d, d.roles().get(0), 0, 0),
                renderer.configHash(d, d.roles().get(0)));
        Pod inline = withScriptInCommand(mounted);
        ExecCommand metrics = ReadCommand.forMember(mounted, ExecLimits.MEMBER_READ.maxStdoutBytes())
                .command()
                .orElseThrow();
        ExecCommand connections = ConnectionRead.command(8000, Optional.empty());

        System.out.println("Object and request sizes (bytes)");
        System.out.printf(Locale.ROOT, "  %-52s %10s %16s%n", "", "as sent", "script inline");
        row("engine Pod as JSON", JSON.writeValueAsBytes(mounted).length, JSON.writeValueAsBytes(inline).length);
        row("the hook's ConfigMap, one per deployment", JSON.writeValueAsBytes(renderer.hookConfigMap(d)).length, 0);
        row(
                "member read: exec request line",
                requestLine(mounted, metrics.argv()),
                requestLine(mounted, inlined(metrics.argv(), ReadCommand.SCRIPT)));
        row(
                "connection read: exec request line",
                requestLine(mounted, connections.argv()),
                requestLine(mounted, inlined(connections.argv(), ConnectionRead.SCRIPT)));
        System.out.println();
    }

    private static void row(String label, int sent, int inline) {
        System.out.printf(
                Locale.ROOT, "  %-52s %10d %16s%n", label, sent, inline == 0 ? "-" : Integer.toString(inline));
    }

    /** The Pod as a release that carried the script in the command rendered it: no volume, the text in the argv. */
    private static Pod withScriptInCommand(Pod rendered) throws Exception {
        Pod pod = JSON.readValue(JSON.writeValueAsBytes(rendered), Pod.class);
        Container engine = pod.getSpec().getContainers().get(0);
        List<String> hook = engine.getLifecycle().getPreStop().getExec().getCommand();
        List<String> older = new ArrayList<>(List.of("python3", "-c", DrainHook.SCRIPT));
        older.addAll(hook.subList(5, hook.size()));
        engine.getLifecycle().getPreStop().getExec().setCommand(older);
        engine.getVolumeMounts().removeIf(m -> m.getName().equals(PodRenderer.DRAIN_HOOK_VOLUME));
        pod.getSpec().getVolumes().removeIf(v -> v.getName().equals(PodRenderer.DRAIN_HOOK_VOLUME));
        pod.getMetadata().getAnnotations().remove(Annotations.HOOK_REVISION);
        return pod;
    }

    private static List<String> inlined(List<String> argv, String script) {
        List<String> inline = new ArrayList<>(argv);
        inline.set(2, script);
        return inline;
    }

    /** The line fabric8 sends for pods/exec: each argv item its own {@code command} parameter. */
    private static int requestLine(Pod pod, List<String> argv) {
        String query = argv.stream()
                .map(a -> "command=" + URLEncoder.encode(a, StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return ("GET /api/v1/namespaces/" + pod.getMetadata().getNamespace() + "/pods/"
                        + pod.getMetadata().getName() + "/exec?" + query + "&container=" + EnginePod.CONTAINER
                        + "&stdin=true&stdout=true&stderr=true HTTP/1.1")
                .length();
    }

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(ObjectSizes::run);
    }
}
