package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.retire.Member;
import dev.ebb.operator.retire.Retirement;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Which Pods' serving label is wrong while no retirement holds them. Pure.
 *
 * <p>A replica is out of traffic only while an operation holds it, or while one of its members terminates: a
 * multi-node engine's collective spans every member, so the replica stops with the member that leaves (its leader's
 * engine fails when a follower stops), and a request sent to it then would be cut. Withdrawn, it gets nothing new, and
 * what its leader holds drains within the leaving follower's grace, whose hook waits for the leader to be idle. Once
 * no member terminates, the replica serves again (a leader that restarted is kept out by its readiness until it is
 * whole again).
 */
public final class ServingLabels {
    private ServingLabels() {}

    /** The members to put back in service: withdrawn, not leaving, in no replica losing a member, reserved by no retirement. */
    public static List<Member> toRestore(Collection<Pod> pods, List<Retirement> records) {
        Set<String> held = heldByRetirements(records);
        Set<String> losing = replicasLosingMembers(pods);
        return pods.stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> !serving(p))
                .filter(p -> !held.contains(p.getMetadata().getName()))
                .filter(p -> replica(p).filter(losing::contains).isEmpty())
                .map(ServingLabels::member)
                .toList();
    }

    /** The members to take out of service: serving, not leaving themselves, reserved by no retirement, while another member of their replica terminates. */
    public static List<Member> toWithdraw(Collection<Pod> pods, List<Retirement> records) {
        Set<String> held = heldByRetirements(records);
        Set<String> losing = replicasLosingMembers(pods);
        return pods.stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(ServingLabels::serving)
                .filter(p -> !held.contains(p.getMetadata().getName()))
                .filter(p -> replica(p).filter(losing::contains).isPresent())
                .map(ServingLabels::member)
                .toList();
    }

    /** The Pods whose serving label {@link #toWithdraw} and {@link #toRestore} change, by name. */
    public static Set<String> relabelled(Collection<Pod> pods, List<Retirement> records) {
        return Stream.concat(toWithdraw(pods, records).stream(), toRestore(pods, records).stream())
                .map(Member::name)
                .collect(Collectors.toSet());
    }

    private static Set<String> heldByRetirements(List<Retirement> records) {
        return records.stream()
                .filter(r -> !r.state().ended())
                .flatMap(r -> r.targets().stream().map(Member::name))
                .collect(Collectors.toSet());
    }

    private static Set<String> replicasLosingMembers(Collection<Pod> pods) {
        return pods.stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() != null)
                .map(ServingLabels::replica)
                .flatMap(Optional::stream)
                .collect(Collectors.toSet());
    }

    /** The replica a Pod belongs to, when its labels place it in one of several members. */
    private static Optional<String> replica(Pod pod) {
        Optional<String> role = PodFacts.label(pod, Labels.ROLE);
        Optional<Integer> ordinal = PodFacts.ordinal(pod);
        return role.isEmpty() || ordinal.isEmpty() ? Optional.empty() : Optional.of(role.get() + "/" + ordinal.get());
    }

    private static boolean serving(Pod pod) {
        return PodFacts.label(pod, Labels.SERVING)
                .filter(Labels.SERVING_YES::equals)
                .isPresent();
    }

    private static Member member(Pod pod) {
        return new Member(pod.getMetadata().getName(), pod.getMetadata().getUid(), null);
    }
}
