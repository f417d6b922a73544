package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.render.DisruptionBudgets;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Keeps one PodDisruptionBudget per role as {@link DisruptionBudgets} renders it: created when missing, put back when
 * edited, and removed once its role has left the spec and its last Pod is gone (a leaving Pod stays covered).
 */
final class RoleBudgets {
    private final OwnedObjects owned;

    RoleBudgets(OwnedObjects owned) {
        this.owned = owned;
    }

    /** @return the budgets' names that another owner holds */
    List<Ownership.Conflict> converge(
            ModelDeployment md,
            DesiredDeployment deployment,
            Collection<Pod> pods,
            Collection<PodDisruptionBudget> cached) {
        Map<String, PodDisruptionBudget> existing = cached.stream()
                .filter(budget -> roleOf(budget).isPresent())
                .collect(Collectors.toMap(budget -> budget.getMetadata().getName(), Function.identity(), (a, b) -> a));
        Map<String, Long> podsByRole = pods.stream()
                .flatMap(pod -> PodFacts.label(pod, Labels.ROLE).stream())
                .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
        List<Ownership.Conflict> conflicts = new ArrayList<>();
        for (DesiredRole role : deployment.roles()) {
            PodDisruptionBudget desired = DisruptionBudgets.of(
                    deployment, role, podsByRole.getOrDefault(role.name(), 0L).intValue());
            PodDisruptionBudget actual = existing.remove(desired.getMetadata().getName());
            if (actual == null || !RouterObjects.asRendered(desired, actual)) {
                owned.restore(md, desired, RouterObjects::asRendered).conflict().ifPresent(conflicts::add);
            }
        }
        Set<String> rolesWithPods = podsByRole.keySet();
        existing.values().stream()
                .filter(budget -> !rolesWithPods.contains(roleOf(budget).orElseThrow()))
                .forEach(budget -> owned.delete(md, budget));
        return conflicts;
    }

    private static Optional<String> roleOf(PodDisruptionBudget budget) {
        return Optional.ofNullable(budget.getMetadata().getLabels()).map(labels -> labels.get(Labels.ROLE));
    }
}
