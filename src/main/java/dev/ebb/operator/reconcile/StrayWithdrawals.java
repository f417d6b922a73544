package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.retire.Member;
import dev.ebb.operator.retire.Retirement;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which withdrawn Pods no retirement holds: an operation that ended, was called off, or was lost with an operator
 * that stopped between withdrawing and recording can leave a Pod out of its Service, serving nobody. Pure.
 */
public final class StrayWithdrawals {
    private StrayWithdrawals() {
    }

    /** The members to put back in service: withdrawn, not leaving, and reserved by no retirement under way. */
    public static List<Member> among(Collection<Pod> pods, List<Retirement> records) {
        Set<String> held = records.stream().filter(r -> !r.state().ended())
                .flatMap(r -> r.targets().stream().map(Member::name))
                .collect(Collectors.toSet());
        return pods.stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> PodFacts.label(p, Labels.SERVING).filter(Labels.SERVING_YES::equals).isEmpty())
                .filter(p -> !held.contains(p.getMetadata().getName()))
                .map(p -> new Member(p.getMetadata().getName(), p.getMetadata().getUid(), null))
                .toList();
    }
}
