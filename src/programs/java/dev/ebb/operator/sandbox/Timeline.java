package dev.ebb.operator.sandbox;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.Termination;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What happened to each replica during a run, in seconds from its start: what the API server showed (created,
 * serving, withdrawn, deleted, gone), what the operator read, what the kubelet did (hook reads, SIGTERM, exit), and
 * every request that was cut.
 */
public final class Timeline implements ResourceEventHandler<Pod> {
    public enum Kind {
        STEP,
        CREATED,
        SERVING,
        WITHDRAWN,
        RETIREMENT,
        OPERATOR_READ,
        DELETED,
        HOOK_READ,
        HOOK_RETURNED,
        SIGTERM,
        EXITED,
        KILLED,
        GONE,
        CUT
    }

    /** The step that starts every run's clock on the page: the first request sent. */
    public static final String LOAD_STARTS = "load starts";

    /** @param pod empty for a step of the choreography */
    public record Mark(double at, String pod, Kind kind, String detail) {}

    private static final Pattern HOOK_READ = Pattern.compile("^t=([0-9.]+)s read: (.*)$");
    private static final Pattern HOOK_RETURN = Pattern.compile("^returning at ([0-9.]+)s: (.*)$");
    private final Instant origin;
    private final List<Mark> marks = new CopyOnWriteArrayList<>();
    private final Set<String> seen = ConcurrentHashMap.newKeySet();

    public Timeline(Instant origin) {
        this.origin = origin;
    }

    public double since(Instant at) {
        return Duration.between(origin, at).toMillis() / 1000.0;
    }

    private void add(Instant at, String pod, Kind kind, String detail) {
        marks.add(new Mark(since(at), pod, kind, detail));
    }

    /** Records a mark once, however often the same fact is seen. */
    private void once(String key, Instant at, String pod, Kind kind, String detail) {
        if (seen.add(key)) {
            add(at, pod, kind, detail);
        }
    }

    public void step(String what) {
        add(Instant.now(), "", Kind.STEP, what);
    }

    @Override
    public void onAdd(Pod pod) {
        once(uid(pod) + "/created", Instant.now(), name(pod), Kind.CREATED, "");
        onUpdate(null, pod);
    }

    @Override
    public void onUpdate(Pod old, Pod pod) {
        boolean wasServing = old != null && Readiness.isPodReady(old) && serving(old);
        if (Readiness.isPodReady(pod) && serving(pod) && !wasServing) {
            add(
                    Instant.now(),
                    name(pod),
                    Kind.SERVING,
                    old != null && !serving(old) ? "serving again" : "ready, routed to");
        }
        if (!serving(pod) && (old == null || serving(old))) {
            add(Instant.now(), name(pod), Kind.WITHDRAWN, "serving=false: out of the router and the Service");
        }
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            once(uid(pod) + "/deleted", Instant.now(), name(pod), Kind.DELETED, "deletion timestamp set");
        }
    }

    @Override
    public void onDelete(Pod pod, boolean finalStateUnknown) {
        once(uid(pod) + "/gone", Instant.now(), name(pod), Kind.GONE, "");
    }

    /** What the operator's status says of the retirements under way: several run side by side in a scale-down by more than one. */
    public void observe(ModelDeployment md) {
        Optional.ofNullable(md)
                .map(ModelDeployment::getStatus)
                .map(s -> s.retirements())
                .orElse(List.of())
                .forEach(this::observe);
    }

    private void observe(RetirementStatus r) {
        if (r.targetMembers() == null || r.targetMembers().isEmpty()) {
            return;
        }
        String pod = r.targetMembers().get(0).name();
        String state = r.state() + (r.reason() == null ? "" : " (" + r.reason() + ")");
        once(pod + "/" + r.startedAt() + "/" + state, Instant.now(), pod, Kind.RETIREMENT, state);
        for (RetirementStatus.MemberRead read : Optional.ofNullable(r.reads()).orElse(List.of())) {
            Instant at = parse(read.time()).orElse(Instant.now());
            String verdict = read.inFlight() == null || read.inFlight() == 0
                    ? read.verdict()
                    : read.verdict() + " " + read.inFlight().intValue();
            once(read.member() + "/read/" + read.time(), at, read.member(), Kind.OPERATOR_READ, verdict);
        }
    }

    public void terminated(Termination t) {
        Instant deletion = t.deletionSeen();
        for (String line : t.hookOutput().lines().toList()) {
            Matcher read = HOOK_READ.matcher(line);
            Matcher returned = HOOK_RETURN.matcher(line);
            if (read.matches()) {
                add(deletion.plusMillis(seconds(read.group(1))), t.pod(), Kind.HOOK_READ, read.group(2));
            } else if (returned.matches()) {
                add(deletion.plusMillis(seconds(returned.group(1))), t.pod(), Kind.HOOK_RETURNED, returned.group(2));
            }
        }
        add(
                deletion.plus(t.sigterm()),
                t.pod(),
                Kind.SIGTERM,
                t.hook().map(h -> "after the preStop hook").orElse("no preStop hook"));
        add(
                deletion.plus(t.exited()),
                t.pod(),
                t.killed() ? Kind.KILLED : Kind.EXITED,
                t.killed() ? "killed at the grace deadline" : "");
    }

    public void cut(LoadGenerator.Request request) {
        add(request.end(), Objects.requireNonNullElse(request.pod(), ""), Kind.CUT, request.why());
    }

    public List<Mark> marks() {
        return marks.stream().sorted(Comparator.comparingDouble(Mark::at)).toList();
    }

    private static long seconds(String value) {
        return Math.round(Double.parseDouble(value) * 1000);
    }

    private static Optional<Instant> parse(String time) {
        try {
            return Optional.ofNullable(time).map(Instant::parse);
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static String uid(Pod pod) {
        return pod.getMetadata().getUid();
    }

    private static String name(Pod pod) {
        return pod.getMetadata().getName();
    }

    private static boolean serving(Pod pod) {
        return Labels.SERVING_YES.equals(pod.getMetadata().getLabels().get(Labels.SERVING));
    }
}
