package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSchedulingGate;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Pods of a replica released for holding its nodes in part are created again behind a scheduling gate, which keeps
 * the scheduler from placing them until the operator lifts it: the accelerators they gave back go first to whatever
 * else waits for them. A gate is the Kubernetes way to hold a Pod unscheduled (GA in 1.30); it can be lifted but never
 * added to a Pod that exists (kube-apiserver v1.37.2 refuses that), so it is set at creation. When to lift it is
 * written on the Pod, so an operator that restarts meanwhile still lifts it in time. Pure: Pods in, Pods and
 * decisions out.
 */
public final class HeldBack {
    public static final String GATE = "serving.ebb.dev/held-back";
    /** On a held-back Pod: when its gate is lifted, as an RFC 3339 time. */
    public static final String UNTIL = "serving.ebb.dev/held-back-until";

    private HeldBack() {}

    /** How a released replica is named among its deployment's: its role and ordinal. */
    static String replicaKey(String role, int ordinal) {
        return role + "/" + ordinal;
    }

    /**
     * The Pod as it is to be created: behind the gate while its replica, named in {@code releasedUntil} by
     * {@link #replicaKey}, is still held back at {@code now}; as rendered otherwise.
     */
    static Pod asCreated(Pod pod, Map<String, Instant> releasedUntil, Instant now) {
        Optional<Instant> until = PodFacts.label(pod, Labels.ROLE)
                .flatMap(role -> PodFacts.ordinal(pod).map(ordinal -> replicaKey(role, ordinal)))
                .map(releasedUntil::get)
                .filter(t -> t.isAfter(now));
        return until.map(t -> gated(pod, t)).orElse(pod);
    }

    /** The Pod as it is created while its replica is held back until {@code until}. */
    public static Pod gated(Pod pod, Instant until) {
        return new PodBuilder(pod)
                .editMetadata()
                .addToAnnotations(UNTIL, until.toString())
                .endMetadata()
                .editSpec()
                .addNewSchedulingGate()
                .withName(GATE)
                .endSchedulingGate()
                .endSpec()
                .build();
    }

    static boolean isGated(Pod pod) {
        return pod.getSpec() != null
                && pod.getSpec().getSchedulingGates() != null
                && pod.getSpec().getSchedulingGates().stream()
                        .map(PodSchedulingGate::getName)
                        .anyMatch(GATE::equals);
    }

    /**
     * The gated Pods whose time has come. A Pod whose time cannot be read is among them: a gate nobody can tell the end
     * of would keep its replica from ever serving.
     */
    static List<Pod> due(Collection<Pod> pods, Instant now) {
        return pods.stream()
                .filter(HeldBack::isGated)
                .filter(p -> until(p).map(t -> !t.isAfter(now)).orElse(true))
                .toList();
    }

    /** How long until the next gated Pod's time comes. */
    static Optional<Duration> nextIn(Collection<Pod> pods, Instant now) {
        return pods.stream()
                .filter(HeldBack::isGated)
                .map(HeldBack::until)
                .flatMap(Optional::stream)
                .filter(t -> t.isAfter(now))
                .min(Instant::compareTo)
                .map(t -> Duration.between(now, t));
    }

    /** The Pod with the operator's gate lifted and every other gate kept. */
    public static Pod lifted(Pod pod) {
        List<PodSchedulingGate> gates =
                Optional.ofNullable(pod.getSpec().getSchedulingGates()).orElse(List.of());
        return new PodBuilder(pod)
                .editSpec()
                .withSchedulingGates(
                        gates.stream().filter(g -> !GATE.equals(g.getName())).toList())
                .endSpec()
                .build();
    }

    private static Optional<Instant> until(Pod pod) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        return PodFacts.time(annotations == null ? null : annotations.get(UNTIL));
    }
}
