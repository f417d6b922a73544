package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.render.ServiceRenderer;
import dev.ebb.operator.retire.NextRetirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;

/** Decides which Pods and Services to create from the desired deployment and what exists. Pure. */
public final class ReplicaPlanner {
    static final String DROPPED_BECAUSE = "its role is no longer in the spec, so every replica of it leaves";

    private ReplicaPlanner() {
    }

    /**
     * @param held per role, the ordinals a retirement holds (one under way, or kept after an abort): they leave, and
     *     nothing of them is put back
     * @param readings per role and ordinal, what one read of a surplus candidate's answering members established
     */
    public static ReplicaPlan plan(DesiredDeployment deployment, Map<String, String> hashes, Inventory inventory,
            Collection<String> existingServices, Map<String, Set<Integer>> held, Map<String, Map<Integer, Reading>> readings) {
        List<Pod> create = new ArrayList<>();
        List<Service> services = new ArrayList<>();
        List<NextRetirement.Candidate> retirements = new ArrayList<>();
        List<NextRetirement.Candidate> dropped = new ArrayList<>();
        List<Pod> neverRan = new ArrayList<>();
        List<ObservedReplica> replaced = new ArrayList<>();
        List<ObservedReplica> awaitingReads = new ArrayList<>();
        Set<String> wanted = new HashSet<>();

        for (DesiredRole role : deployment.roles()) {
            String hash = hashes.get(role.name());
            NavigableMap<Integer, ObservedReplica> existing = inventory.replicas(role.name());
            Set<Integer> heldHere = held.getOrDefault(role.name(), Set.of());
            Set<Integer> ordinals = new HashSet<>(existing.keySet());
            SurplusChoice.Split split = SurplusChoice.split(existing, role.replicas(), heldHere, hash,
                    readings.getOrDefault(role.name(), Map.of()));
            awaitingReads.addAll(split.awaitingReads());

            split.staying().values().stream()
                    .filter(r -> r.configHash().filter(hash::equals).isPresent())
                    .filter(r -> !heldHere.contains(r.ordinal()) && !r.terminating())
                    .forEach(r -> addMissingMembers(deployment, role, r, hash, create));

            int missing = role.replicas() - split.staying().size();
            for (int ordinal = 0; missing > 0; ordinal++) {
                if (ordinals.add(ordinal)) {
                    for (int member = 0; member < role.size(); member++) {
                        create.add(PodRenderer.render(new MemberSlot(deployment, role, ordinal, member), hash));
                    }
                    missing--;
                }
            }
            shed(split, true, neverRan, retirements);
            RolloutStep.next(existing, split.staying(), role.replicas(), hash).ifPresent(replaced::add);

            services.add(ServiceRenderer.roleService(deployment, role));
            if (role.size() > 1) {
                ordinals.stream().sorted().forEach(o -> services.add(ServiceRenderer.replicaService(deployment, role, o)));
            }
        }
        inventory.byRole().forEach((role, existing) -> {
            if (deployment.roles().stream().noneMatch(r -> r.name().equals(role))) {
                // nothing of a dropped role is desired, so no configuration of it matters
                shed(SurplusChoice.split(existing, 0, held.getOrDefault(role, Set.of()), "", Map.of()), false, neverRan, dropped);
            }
        });
        services.forEach(s -> wanted.add(s.getMetadata().getName()));
        // the router's Service is the router's to keep
        deployment.router().ifPresent(r -> wanted.add(Names.router(deployment.owner().name())));
        stillNeededByLeavingPods(deployment.owner().name(), inventory, wanted);

        List<String> obsolete = existingServices.stream().filter(name -> !wanted.contains(name)).sorted().toList();
        // a dropped role gives back everything it has, so it goes before roles that only shrink
        dropped.addAll(retirements);
        return new ReplicaPlan(List.copyOf(create), List.copyOf(services), obsolete, List.copyOf(neverRan), List.copyOf(dropped),
                List.copyOf(replaced), List.copyOf(awaitingReads));
    }

    /** Replicas that never ran go at once; every other leaving one is a candidate for retirement, in the order it goes. */
    private static void shed(SurplusChoice.Split split, boolean roleInSpec, List<Pod> neverRan, List<NextRetirement.Candidate> retirements) {
        for (SurplusChoice.Removal removal : split.leaving()) {
            if (removal.direct()) {
                neverRan.addAll(removal.replica().members());
            } else {
                String because = roleInSpec || SurplusChoice.HELD_BECAUSE.equals(removal.chosenBecause())
                        ? removal.chosenBecause() : DROPPED_BECAUSE;
                retirements.add(new NextRetirement.Candidate(removal.replica().role(), removal.replica().ordinal(), roleInSpec, because));
            }
        }
    }

    /** A replica whose role left the spec keeps its Services until its last Pod is gone. */
    private static void stillNeededByLeavingPods(String owner, Inventory inventory, Set<String> wanted) {
        inventory.byRole().forEach((role, replicas) -> {
            wanted.add(Names.roleService(owner, role));
            replicas.keySet().forEach(ordinal -> wanted.add(Names.replica(owner, role, ordinal)));
        });
    }

    /** A member that vanished from a replica at today's config is put back; an outdated replica waits for its rollout. */
    private static void addMissingMembers(DesiredDeployment deployment, DesiredRole role, ObservedReplica replica,
            String hash, List<Pod> create) {
        if (replica.createdSize().filter(size -> size == role.size()).isEmpty()) {
            return;
        }
        for (int member = 0; member < role.size(); member++) {
            if (!replica.hasMember(member)) {
                create.add(PodRenderer.render(new MemberSlot(deployment, role, replica.ordinal(), member), hash));
            }
        }
    }
}
