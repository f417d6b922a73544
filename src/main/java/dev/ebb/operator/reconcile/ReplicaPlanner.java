package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.v1alpha1.NodeMaintenance;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.render.ServiceRenderer;
import dev.ebb.operator.retire.Budgets;
import dev.ebb.operator.retire.NextRetirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/** Decides which Pods and Services to create from the desired deployment and what exists. Pure. */
public final class ReplicaPlanner {
    static final String DROPPED_BECAUSE = "its role is no longer in the spec, so every replica of it leaves";
    static final String REFRESHED_BECAUSE =
            "it carries an older drain hook or default image than the operator renders, and "
                    + Annotations.REFRESH_HOOKS + " asks for the current ones";

    private ReplicaPlanner() {}

    /**
     * What the planner knows of the retirements, besides the cluster.
     *
     * @param held per role, the ordinals a reduction holds (under way, or kept after an abort): they leave, and nothing
     *     of them is put back
     * @param rollingOut per role, the ordinals a rollout is retiring now
     * @param rolloutWaiting per role, the ordinals a rollout passes over for now (aborted, not yet to be retried)
     * @param readings per role and ordinal, what one read of a surplus candidate's answering members established
     * @param byLoad whether the idlest surplus replicas leave, rather than the highest ordinals
     * @param refresh whether the user asked for the replicas behind the operator (an older drain hook or default image)
     *     to be replaced, as a rollout replaces those at an older configuration
     * @param nodesLeaving the nodes going away, by name ({@link NodesLeaving}): a replica of a role whose node
     *     maintenance goes through the protocol is moved off them as a rollout replaces it, within its role's drain
     *     budget counted from when the node was first seen going
     * @param now the time of the pass, against which those budgets are counted
     */
    public record Retirements(
            Map<String, Set<Integer>> held,
            Map<String, Set<Integer>> rollingOut,
            Map<String, Set<Integer>> rolloutWaiting,
            Map<String, Map<Integer, Reading>> readings,
            boolean byLoad,
            boolean refresh,
            Map<String, NodesLeaving.Going> nodesLeaving,
            Instant now) {}

    /** The first node going away that a member of the replica runs on, and how it goes. */
    static Optional<Map.Entry<String, NodesLeaving.Going>> leavingNode(
            ObservedReplica replica, Map<String, NodesLeaving.Going> nodesLeaving) {
        return replica.members().stream()
                .map(p -> p.getSpec() == null ? null : p.getSpec().getNodeName())
                .filter(Objects::nonNull)
                .filter(nodesLeaving::containsKey)
                .sorted()
                .findFirst()
                .map(node -> Map.entry(node, nodesLeaving.get(node)));
    }

    /** Whether a member of the replica carries an older drain hook, default engine image or routing proxy image than the renderer's. */
    private static boolean behindTheOperator(
            PodRenderer renderer, DesiredDeployment deployment, DesiredRole role, ObservedReplica replica) {
        return replica.members().stream()
                .anyMatch(p -> renderer.hookOutdated(p, deployment) || renderer.imageOutdated(p, deployment, role));
    }

    public static ReplicaPlan plan(
            PodRenderer renderer,
            DesiredDeployment deployment,
            Map<String, String> hashes,
            Inventory inventory,
            Collection<String> existingServices,
            Retirements retirements) {
        Map<String, Set<Integer>> held = retirements.held();
        List<Pod> create = new ArrayList<>();
        List<Service> services = new ArrayList<>();
        List<NextRetirement.Candidate> leaving = new ArrayList<>();
        List<NextRetirement.Candidate> dropped = new ArrayList<>();
        List<Pod> neverRan = new ArrayList<>();
        List<NextRetirement.Replica> later = new ArrayList<>();
        List<ObservedReplica> awaitingReads = new ArrayList<>();
        List<ReplicaPlan.HandBack> handedBack = new ArrayList<>();
        Set<String> wanted = new HashSet<>();

        for (DesiredRole role : deployment.roles()) {
            String hash = hashes.get(role.name());
            NavigableMap<Integer, ObservedReplica> existing = inventory.replicas(role.name());
            Set<Integer> heldHere = held.getOrDefault(role.name(), Set.of());
            Set<Integer> ordinals = new HashSet<>(existing.keySet());
            Map<String, NodesLeaving.Going> nodesLeaving =
                    role.nodeMaintenance() == NodeMaintenance.Protocol ? retirements.nodesLeaving() : Map.of();
            Predicate<ObservedReplica> current = RolloutStep.atHash(hash)
                    .and(r -> !retirements.refresh() || !behindTheOperator(renderer, deployment, role, r))
                    .and(r -> leavingNode(r, nodesLeaving).isEmpty());
            // with a surge allowed, the role keeps one replica more for as long as any that stays is outdated
            boolean outdatedStays =
                    existing.values().stream().anyMatch(r -> !heldHere.contains(r.ordinal()) && !current.test(r));
            int keep = role.replicas() + (outdatedStays && role.replicas() > 0 ? role.maxSurge() : 0);
            SurplusChoice.Split split = SurplusChoice.split(
                    existing,
                    keep,
                    heldHere,
                    hash,
                    retirements.readings().getOrDefault(role.name(), Map.of()),
                    retirements.byLoad());
            awaitingReads.addAll(split.awaitingReads());

            split.staying().values().stream()
                    .filter(r -> r.configHash().filter(hash::equals).isPresent())
                    .filter(r -> !heldHere.contains(r.ordinal()) && !r.terminating())
                    .forEach(r -> addMissingMembers(renderer, deployment, role, r, hash, create));

            int missing = keep - split.staying().size();
            for (int ordinal = 0; missing > 0; ordinal++) {
                if (ordinals.add(ordinal)) {
                    for (int member = 0; member < role.size(); member++) {
                        create.add(renderer.render(new MemberSlot(deployment, role, ordinal, member), hash));
                    }
                    missing--;
                }
            }
            shed(split, role, neverRan, leaving);
            rollout(
                    role,
                    hash,
                    current,
                    existing,
                    split.staying(),
                    keep,
                    retirements,
                    nodesLeaving,
                    neverRan,
                    leaving,
                    later,
                    handedBack);

            services.add(ServiceRenderer.roleService(deployment, role));
            if (role.size() > 1) {
                ordinals.stream()
                        .sorted()
                        .forEach(o -> services.add(ServiceRenderer.replicaService(deployment, role, o)));
            }
        }
        inventory.byRole().forEach((role, existing) -> {
            if (deployment.roles().stream().noneMatch(r -> r.name().equals(role))) {
                // nothing of a dropped role is desired, so no configuration of it matters
                shed(
                        SurplusChoice.split(
                                existing, 0, held.getOrDefault(role, Set.of()), "", Map.of(), retirements.byLoad()),
                        null,
                        neverRan,
                        dropped);
            }
        });
        services.forEach(s -> wanted.add(s.getMetadata().getName()));
        // the router's Service is the router's to keep
        deployment
                .router()
                .ifPresent(r -> wanted.add(Names.router(deployment.owner().name())));
        stillNeededByLeavingPods(deployment.owner().name(), inventory, wanted);

        List<String> obsolete = existingServices.stream()
                .filter(name -> !wanted.contains(name))
                .sorted()
                .toList();
        // a dropped role gives back everything it has, so it goes before roles that only shrink
        dropped.addAll(leaving);
        return new ReplicaPlan(
                List.copyOf(create),
                List.copyOf(services),
                obsolete,
                List.copyOf(neverRan),
                List.copyOf(dropped),
                List.copyOf(later),
                List.copyOf(awaitingReads),
                List.copyOf(handedBack));
    }

    /**
     * Replicas that never ran go at once; every other leaving one is a candidate for retirement, in the order it goes.
     *
     * @param role the role in the spec, null when the spec dropped it
     */
    private static void shed(
            SurplusChoice.Split split, DesiredRole role, List<Pod> neverRan, List<NextRetirement.Candidate> leaving) {
        for (SurplusChoice.Removal removal : split.leaving()) {
            if (removal.direct()) {
                neverRan.addAll(removal.replica().members());
            } else {
                boolean inSpec = role != null;
                String because = inSpec || SurplusChoice.HELD_BECAUSE.equals(removal.chosenBecause())
                        ? removal.chosenBecause()
                        : DROPPED_BECAUSE;
                leaving.add(new NextRetirement.Candidate(
                        removal.replica().role(),
                        removal.replica().ordinal(),
                        inSpec ? NextRetirement.Purpose.REDUCTION : NextRetirement.Purpose.ROLE_DROPPED,
                        because,
                        inSpec ? role.drainBudget() : Budgets.DRAINING,
                        removal.replica().terminating()));
            }
        }
    }

    /**
     * The rollout's step: the replica whose turn it is retires (one that never ran goes at once), and every other
     * outdated replica that stays waits for its turn. A replica at today's configuration that is not current is behind
     * the operator, replaced on the user's refresh, or runs on a node going away, moved off it. A move has what is left
     * of its role's drain budget since its node was first seen going; a replica on such a node whose budget ran out
     * before its move began is handed to the node's drain at once, however many there are, so that no drain waits on a
     * role longer than its drain budget and the grace.
     */
    private static void rollout(
            DesiredRole role,
            String hash,
            Predicate<ObservedReplica> current,
            NavigableMap<Integer, ObservedReplica> existing,
            NavigableMap<Integer, ObservedReplica> staying,
            int keep,
            Retirements retirements,
            Map<String, NodesLeaving.Going> nodesLeaving,
            List<Pod> neverRan,
            List<NextRetirement.Candidate> leaving,
            List<NextRetirement.Replica> later,
            List<ReplicaPlan.HandBack> handedBack) {
        Set<Integer> underWay = retirements.rollingOut().getOrDefault(role.name(), Set.of());
        Predicate<ObservedReplica> outOfTime = r -> !underWay.contains(r.ordinal())
                && !r.terminating()
                && r.everRan()
                && leavingNode(r, nodesLeaving)
                        .filter(node ->
                                left(role, node.getValue(), retirements.now()).isZero())
                        .isPresent();
        staying.values().stream()
                .filter(outOfTime)
                .forEach(r -> handedBack.add(new ReplicaPlan.HandBack(
                        r, handBackMessage(role, r, leavingNode(r, nodesLeaving).orElseThrow()))));
        Optional<ObservedReplica> turn = RolloutStep.next(
                        existing,
                        staying,
                        keep,
                        current,
                        underWay,
                        retirements.rolloutWaiting().getOrDefault(role.name(), Set.of()),
                        staying.values().stream()
                                .anyMatch(r -> leavingNode(r, nodesLeaving).isPresent()))
                .filter(outOfTime.negate());
        turn.filter(r -> !r.everRan()).ifPresent(r -> neverRan.addAll(r.members()));
        turn.filter(ObservedReplica::everRan)
                .ifPresent(r -> leaving.add(leavingNode(r, nodesLeaving)
                        .map(node -> new NextRetirement.Candidate(
                                role.name(),
                                r.ordinal(),
                                NextRetirement.Purpose.NODE_MAINTENANCE,
                                "its node " + node.getKey() + " is "
                                        + node.getValue().sign() + "; it moves off before the node is drained",
                                left(role, node.getValue(), retirements.now()),
                                r.terminating()))
                        .orElseGet(() -> new NextRetirement.Candidate(
                                role.name(),
                                r.ordinal(),
                                NextRetirement.Purpose.ROLLOUT,
                                RolloutStep.atHash(hash).test(r)
                                        ? REFRESHED_BECAUSE
                                        : "at configuration " + r.configHash().orElse("mixed")
                                                + ", replaced by the rollout to " + hash,
                                role.drainBudget(),
                                r.terminating()))));
        staying.values().stream()
                .filter(r -> !current.test(r)
                        && turn.filter(t -> t.ordinal() == r.ordinal()).isEmpty()
                        && !outOfTime.test(r))
                .forEach(r -> later.add(new NextRetirement.Replica(role.name(), r.ordinal())));
    }

    /** What is left of the role's drain budget for replicas on a node going away; zero once it has run out. */
    private static Duration left(DesiredRole role, NodesLeaving.Going node, Instant now) {
        Duration left = Duration.between(now, node.since().plus(role.drainBudget()));
        return left.isNegative() ? Duration.ZERO : left;
    }

    private static String handBackMessage(
            DesiredRole role, ObservedReplica replica, Map.Entry<String, NodesLeaving.Going> node) {
        return "replica " + replica.ordinal() + " of role " + role.name() + " could not be moved off its node "
                + node.getKey() + " ("
                + node.getValue().sign() + ") within " + role.drainBudget().toSeconds()
                + " s, the role's drain budget, before its turn came;"
                + " deleting it with its grace, as the node's drain would have, so the drain is not held longer";
    }

    /** A replica whose role left the spec keeps its Services until its last Pod is gone. */
    private static void stillNeededByLeavingPods(String owner, Inventory inventory, Set<String> wanted) {
        inventory.byRole().forEach((role, replicas) -> {
            wanted.add(Names.roleService(owner, role));
            replicas.keySet().forEach(ordinal -> wanted.add(Names.replica(owner, role, ordinal)));
        });
    }

    /** A member that vanished from a replica at today's config is put back; an outdated replica waits for its rollout. */
    private static void addMissingMembers(
            PodRenderer renderer,
            DesiredDeployment deployment,
            DesiredRole role,
            ObservedReplica replica,
            String hash,
            List<Pod> create) {
        if (replica.createdSize().filter(size -> size == role.size()).isEmpty()) {
            return;
        }
        for (int member = 0; member < role.size(); member++) {
            if (!replica.hasMember(member)) {
                create.add(renderer.render(new MemberSlot(deployment, role, replica.ordinal(), member), hash));
            }
        }
    }
}
