package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The replicas that exist, grouped by role and ordinal. A Pod whose role, ordinal or member index cannot be read
 * is not part of any replica: it is reported as a stray rather than guessed at.
 */
public record Inventory(Map<String, NavigableMap<Integer, ObservedReplica>> byRole, List<Pod> strays) {

    public static Inventory of(Collection<Pod> pods) {
        Map<String, NavigableMap<Integer, List<Pod>>> grouped = new TreeMap<>();
        List<Pod> strays = new ArrayList<>();
        for (Pod pod : pods) {
            Optional<String> role = PodFacts.label(pod, Labels.ROLE);
            Optional<Integer> ordinal = PodFacts.ordinal(pod);
            if (role.isEmpty() || ordinal.isEmpty() || PodFacts.memberIndex(pod).isEmpty()) {
                strays.add(pod);
                continue;
            }
            grouped.computeIfAbsent(role.get(), r -> new TreeMap<>())
                    .computeIfAbsent(ordinal.get(), o -> new ArrayList<>())
                    .add(pod);
        }
        Map<String, NavigableMap<Integer, ObservedReplica>> byRole = new TreeMap<>();
        grouped.forEach((role, ordinals) -> {
            NavigableMap<Integer, ObservedReplica> replicas = new TreeMap<>();
            ordinals.forEach((ordinal, members) -> {
                members.sort(Comparator.comparing(p -> p.getMetadata().getName()));
                replicas.put(ordinal, new ObservedReplica(role, ordinal, members));
            });
            byRole.put(role, replicas);
        });
        return new Inventory(byRole, List.copyOf(strays));
    }

    public NavigableMap<Integer, ObservedReplica> replicas(String role) {
        return byRole.getOrDefault(role, new TreeMap<>());
    }
}
