package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.AbortedRetirement;
import dev.ebb.operator.api.v1alpha1.DrainStatus;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.api.v1alpha1.ScalingStatus;
import dev.ebb.operator.drain.DrainTimeline;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.retire.NextRetirement;
import dev.ebb.operator.retire.Reason;
import dev.ebb.operator.retire.RetirementState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** Sums up what exists against what the spec asks for. Pure: the clock's reading comes in as a value. */
public final class StatusAggregator {
    public static final String PHASE_STARTING = "Starting";
    public static final String PHASE_READY = "Ready";
    public static final String PHASE_DEGRADED = "Degraded";
    public static final String PHASE_DELETING = "Deleting";

    public static final String REASON_INVALID_SPEC = "InvalidSpec";
    public static final String REASON_SCALING_DOWN = "ScalingDown";
    public static final String REASON_NO_RETIREMENT = "NoRetirement";
    public static final String REASON_ROLLOUT = "RolloutInProgress";
    public static final String REASON_CREATING = "ReplicasCreating";
    public static final String REASON_DELETING = "Deleting";
    public static final String REASON_NAME_CONFLICT = "NameConflict";
    public static final String REASON_REPLICAS_FAILING = "ReplicasFailing";
    public static final String REASON_RETIREMENTS = "RetirementsInProgress";
    public static final String REASON_RETIREMENTS_ABORTED = "RetirementsAborted";
    public static final String REASON_BLOCKED = "RetirementBlocked";
    public static final String REASON_NOT_BLOCKED = "NotBlocked";
    public static final String REASON_ROUTER_NOT_READY = "RouterNotReady";
    public static final String REASON_MOVING = "MovingOffNodes";
    public static final String REASON_NO_MAINTENANCE = "NoMaintenance";
    /** Well under the 32 KiB a condition's message may hold, and still long enough for several retirements. */
    private static final int MAX_MESSAGE = 4096;

    private StatusAggregator() {}

    public static ModelDeploymentStatus accepted(
            PodRenderer renderer,
            long generation,
            DesiredDeployment deployment,
            Map<String, String> hashes,
            Inventory inventory,
            Optional<RouterStatus> router,
            List<RetirementStatus> retirements,
            List<AbortedRetirement> aborted,
            List<Ownership.Conflict> conflicts,
            List<Condition> previous,
            Instant now) {
        List<RoleStatus> roles = deployment.roles().stream()
                .map(role -> roleStatus(
                        renderer, deployment, role, hashes.get(role.name()), inventory.replicas(role.name())))
                .toList();

        List<String> notReady = roles.stream()
                .filter(r -> r.ready() < r.desired())
                .map(r -> "role " + r.name() + " has " + r.ready() + "/" + r.desired() + " replicas ready")
                .toList();
        List<String> failing = deployment.roles().stream()
                .flatMap(role -> inventory.replicas(role.name()).values().stream())
                .filter(ObservedReplica::failing)
                .map(r -> "replica " + r.ordinal() + " of role " + r.role()
                        + " ran and is not Ready (a container restarted or a Pod failed)")
                .toList();
        Condition ready;
        if (!conflicts.isEmpty()) {
            ready = nameConflict(conflicts, generation, previous, now);
        } else if (!failing.isEmpty()) {
            ready = Conditions.next(
                    previous,
                    Conditions.READY,
                    false,
                    REASON_REPLICAS_FAILING,
                    Sentences.bounded(String.join("; ", failing), MAX_MESSAGE),
                    generation,
                    now);
        } else {
            ready = Conditions.next(
                    previous,
                    Conditions.READY,
                    notReady.isEmpty(),
                    notReady.isEmpty() ? "AllReplicasReady" : "ReplicasNotReady",
                    notReady.isEmpty() ? "every role has its desired replicas ready" : String.join("; ", notReady),
                    generation,
                    now);
        }
        Condition upToDate = upToDate(roles, generation, previous, now);

        Condition blocked = blocked(aborted, generation, previous, now);
        List<Condition> conditions = new ArrayList<>(List.of(
                ready,
                upToDate,
                retiring(retirements, generation, previous, now),
                blocked,
                maintenance(retirements, generation, previous, now)));
        router.ifPresent(r -> conditions.add(routerReady(r, generation, previous, now)));
        // something that worked and stopped, or a replica the protocol cannot take away, is not a deployment still
        // starting
        boolean degraded = !conflicts.isEmpty() || !failing.isEmpty() || "True".equals(blocked.getStatus());
        return new ModelDeploymentStatus(
                generation,
                degraded ? PHASE_DEGRADED : notReady.isEmpty() ? PHASE_READY : PHASE_STARTING,
                summary(roles),
                roles,
                router.orElse(null),
                retirementsSummary(retirements),
                List.copyOf(retirements),
                List.copyOf(aborted),
                List.copyOf(conditions),
                scaling(deployment, roles),
                null,
                null);
    }

    /**
     * What the scale subresource reads: the scaled role's replicas as they are (a leaving one included, as a
     * Deployment's status.replicas counts a terminating Pod's ReplicaSet share), and the selector of its serving
     * leaders, in the serialized form of a label selector (sorted key=value pairs joined by commas, as apimachinery's
     * labels.Set.String writes it), which is what a CRD's labelSelectorPath must hold.
     */
    private static ScalingStatus scaling(DesiredDeployment deployment, List<RoleStatus> roles) {
        String role = deployment.scaling().role();
        int current = roles.stream()
                .filter(r -> r.name().equals(role))
                .mapToInt(RoleStatus::current)
                .findFirst()
                .orElse(0);
        Map<String, String> leaders = new TreeMap<>(Map.of(
                Labels.DEPLOYMENT,
                deployment.owner().name(),
                Labels.ROLE,
                role,
                Labels.MEMBER_INDEX,
                Labels.LEADER_INDEX,
                Labels.SERVING,
                Labels.SERVING_YES));
        String selector = leaders.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(","));
        return new ScalingStatus(
                role, current, selector, deployment.scaling().override().orElse(null));
    }

    /**
     * Names this deployment renders that another owner's objects hold: those objects are left alone, so what they
     * stand for is missing here until one of the two is renamed.
     */
    private static Condition nameConflict(
            List<Ownership.Conflict> conflicts, long generation, List<Condition> previous, Instant now) {
        String held =
                conflicts.stream().map(Ownership.Conflict::sentence).distinct().collect(Collectors.joining("; "));
        return Conditions.next(
                previous,
                Conditions.READY,
                false,
                REASON_NAME_CONFLICT,
                held
                        + "; they are left as they are, and this ModelDeployment goes without them until it or a role is renamed",
                generation,
                now);
    }

    /**
     * A rejected spec changes nothing that exists; status says which fields are wrong. It takes nothing away either, so
     * no aborted retirement holds a replica back.
     */
    public static ModelDeploymentStatus rejected(
            long generation,
            Resolution.Rejected rejection,
            List<RetirementStatus> retirements,
            List<Condition> previous,
            Instant now) {
        Condition ready = Conditions.next(
                previous, Conditions.READY, false, REASON_INVALID_SPEC, rejection.summary(), generation, now);
        Condition upToDate = Conditions.next(
                previous,
                Conditions.REPLICAS_UP_TO_DATE,
                false,
                REASON_INVALID_SPEC,
                "nothing is created or changed until the spec is fixed",
                generation,
                now);
        return new ModelDeploymentStatus(
                generation,
                PHASE_DEGRADED,
                null,
                List.of(),
                null,
                retirementsSummary(retirements),
                List.copyOf(retirements),
                List.of(),
                List.of(
                        ready,
                        upToDate,
                        retiring(retirements, generation, previous, now),
                        blocked(List.of(), generation, previous, now)));
    }

    /**
     * While a deleted ModelDeployment's Pods drain on their way out. The rest of the last status is kept as it was:
     * it is the last word on what the deployment was doing.
     */
    public static ModelDeploymentStatus deleting(
            ModelDeploymentStatus last, long generation, int podsLeft, Instant now) {
        List<Condition> previous = last == null || last.conditions() == null ? List.of() : last.conditions();
        Condition ready = Conditions.next(
                previous,
                Conditions.READY,
                false,
                REASON_DELETING,
                podsLeft
                        + " Pod(s) still draining their requests; the router and the Services stay until they are gone",
                generation,
                now);
        List<Condition> conditions = new ArrayList<>(previous.stream()
                .filter(c -> !Conditions.READY.equals(c.getType()))
                .toList());
        conditions.add(0, ready);
        return last == null
                ? new ModelDeploymentStatus(
                        generation,
                        PHASE_DELETING,
                        null,
                        List.of(),
                        null,
                        null,
                        List.of(),
                        List.of(),
                        List.copyOf(conditions))
                : new ModelDeploymentStatus(
                        generation,
                        PHASE_DELETING,
                        last.rolesSummary(),
                        last.roles(),
                        last.router(),
                        last.retirementsSummary(),
                        last.retirements(),
                        last.abortedRetirements(),
                        List.copyOf(conditions),
                        last.scaling(),
                        last.hooksRefreshing(),
                        last.hooksRefreshedFor());
    }

    /** Whether the router has a replica ready; while it has none, no withdrawal can be confirmed through it. */
    private static Condition routerReady(RouterStatus router, long generation, List<Condition> previous, Instant now) {
        boolean ready = Boolean.TRUE.equals(router.ready());
        return Conditions.next(
                previous,
                Conditions.ROUTER_READY,
                ready,
                ready ? "RouterAvailable" : REASON_ROUTER_NOT_READY,
                ready
                        ? router.name() + " has " + router.readyReplicas() + " replica(s) ready"
                        : router.name()
                                + " has no replica ready: clients reach no role through it, and retirements hold until it answers",
                generation,
                now);
    }

    /**
     * True while any retirement is under way, with their reason when they share one; an aborted one stays on record,
     * False, with its reason, while nothing else runs.
     */
    private static Condition retiring(
            List<RetirementStatus> retirements, long generation, List<Condition> previous, Instant now) {
        List<RetirementStatus> underWay =
                retirements.stream().filter(r -> !ended(r)).toList();
        List<RetirementStatus> shown = underWay.isEmpty() ? retirements : underWay;
        if (shown.isEmpty()) {
            return Conditions.next(
                    previous,
                    Conditions.RETIREMENT_PROGRESSING,
                    false,
                    REASON_NO_RETIREMENT,
                    "no replica is being retired",
                    generation,
                    now);
        }
        List<String> reasons =
                shown.stream().map(RetirementStatus::reason).distinct().toList();
        // one reason shared by all of them says more than a count
        String reason = reasons.size() == 1
                ? reasons.get(0)
                : underWay.isEmpty() ? REASON_RETIREMENTS_ABORTED : REASON_RETIREMENTS;
        String message = shown.stream()
                .map(r -> "replica " + r.replicaOrdinal() + " of role " + r.roleName() + " (" + r.cause() + ", "
                        + r.state() + "): " + r.message())
                .collect(Collectors.joining("; "));
        String counted = shown.size() == 1
                ? message
                : shown.size() + (underWay.isEmpty() ? " retirements aborted: " : " retirements under way: ") + message;
        return Conditions.next(
                previous,
                Conditions.RETIREMENT_PROGRESSING,
                !underWay.isEmpty(),
                reason,
                Sentences.bounded(counted, MAX_MESSAGE),
                generation,
                now);
    }

    /**
     * True while replicas move off nodes going away, naming each and its node; its reason says when one could not be
     * proven idle in time and was handed to the drain.
     */
    private static Condition maintenance(
            List<RetirementStatus> retirements, long generation, List<Condition> previous, Instant now) {
        List<RetirementStatus> moving = retirements.stream()
                .filter(r -> NextRetirement.NODE_MAINTENANCE.equals(r.cause()) && !ended(r))
                .toList();
        if (moving.isEmpty()) {
            return Conditions.next(
                    previous,
                    Conditions.NODE_MAINTENANCE,
                    false,
                    REASON_NO_MAINTENANCE,
                    "no replica is moving off a node going away",
                    generation,
                    now);
        }
        boolean handedBack =
                moving.stream().anyMatch(r -> Reason.HANDED_BACK.wire().equals(r.reason()));
        String message = moving.stream()
                .map(r -> "replica " + r.replicaOrdinal() + " of role " + r.roleName() + " (" + r.chosenBecause()
                        + "): " + r.message())
                .collect(Collectors.joining("; "));
        return Conditions.next(
                previous,
                Conditions.NODE_MAINTENANCE,
                true,
                handedBack ? Reason.HANDED_BACK.wire() : REASON_MOVING,
                Sentences.bounded(message, MAX_MESSAGE),
                generation,
                now);
    }

    /**
     * True while a replica's retirement aborted {@value NextRetirement#BLOCKING_ABORTS} times in a row: it is still
     * retried after ever longer cool-downs, but something keeps it busy that the user should look at.
     */
    private static Condition blocked(
            List<AbortedRetirement> aborted, long generation, List<Condition> previous, Instant now) {
        List<AbortedRetirement> blocked = aborted.stream()
                .filter(a -> a.attempts() != null && a.attempts() >= NextRetirement.BLOCKING_ABORTS)
                .filter(a -> Reason.fromWire(a.reason()).filter(Reason::refusal).isEmpty())
                .toList();
        if (blocked.isEmpty()) {
            return Conditions.next(
                    previous,
                    Conditions.RETIREMENT_BLOCKED,
                    false,
                    REASON_NOT_BLOCKED,
                    "no replica's retirement is blocked",
                    generation,
                    now);
        }
        String message = blocked.stream()
                .map(a -> "replica " + a.replicaOrdinal() + " of role " + a.roleName() + " aborted " + a.attempts()
                        + " times in a row, last " + a.reason() + ": " + a.message())
                .collect(Collectors.joining("; "));
        return Conditions.next(
                previous,
                Conditions.RETIREMENT_BLOCKED,
                true,
                REASON_BLOCKED,
                Sentences.bounded(
                        message
                                + "; it keeps serving and is retried after ever longer cool-downs (up to an hour): set the annotation "
                                + Annotations.RETRY_RETIREMENT
                                + " to a new value, or change the spec, to try again now",
                        MAX_MESSAGE),
                generation,
                now);
    }

    /** One state when one retirement runs, else the count of each state, for the printer column. */
    static String retirementsSummary(List<RetirementStatus> retirements) {
        if (retirements.isEmpty()) {
            return null;
        }
        if (retirements.size() == 1) {
            return retirements.get(0).state();
        }
        Map<String, Long> byState = retirements.stream()
                .collect(Collectors.groupingBy(RetirementStatus::state, TreeMap::new, Collectors.counting()));
        return byState.entrySet().stream()
                .map(e -> e.getValue() + " " + e.getKey())
                .collect(Collectors.joining(", "));
    }

    private static boolean ended(RetirementStatus r) {
        return RetirementState.Aborted.name().equals(r.state())
                || RetirementState.Completed.name().equals(r.state());
    }

    private static RoleStatus roleStatus(
            PodRenderer renderer,
            DesiredDeployment deployment,
            DesiredRole role,
            String hash,
            NavigableMap<Integer, ObservedReplica> replicas) {
        int ready =
                (int) replicas.values().stream().filter(ObservedReplica::ready).count();
        int updated = (int) replicas.values().stream()
                .filter(r -> r.configHash().filter(hash::equals).isPresent())
                .count();
        int hookOutdated = (int) replicas.values().stream()
                .flatMap(r -> r.members().stream())
                .filter(p -> renderer.hookOutdated(p, deployment))
                .count();
        int imageOutdated = (int) replicas.values().stream()
                .flatMap(r -> r.members().stream())
                .filter(p -> renderer.imageOutdated(p, deployment, role))
                .count();
        List<Pod> members =
                replicas.values().stream().flatMap(r -> r.members().stream()).toList();
        int partlyScheduled = PartlyScheduled.among(members).size();
        int heldBack = (int) members.stream().filter(HeldBack::isGated).count();
        return new RoleStatus(
                role.name(),
                role.kind().wireName(),
                role.replicas(),
                replicas.size(),
                ready,
                updated,
                role.takeOver(),
                hookOutdated,
                imageOutdated,
                partlyScheduled,
                heldBack,
                drainStatus(renderer.drainTimeline(deployment, role)));
    }

    private static DrainStatus drainStatus(DrainTimeline timeline) {
        List<DrainStatus.Warning> warnings = timeline.warnings().stream()
                .map(w -> new DrainStatus.Warning(w.reason(), w.message()))
                .toList();
        return timeline.hooked()
                ? new DrainStatus(
                        timeline.grace().orElse(null),
                        timeline.lastReadStartsBy(),
                        timeline.sigtermBy(),
                        timeline.engineShutdown().orElse(null),
                        warnings)
                : new DrainStatus(timeline.grace().orElse(null), null, null, null, warnings);
    }

    private static Condition upToDate(List<RoleStatus> roles, long generation, List<Condition> previous, Instant now) {
        List<String> surplus = new ArrayList<>();
        List<String> outdated = new ArrayList<>();
        List<String> creating = new ArrayList<>();
        for (RoleStatus r : roles) {
            if (r.current() > r.desired()) {
                surplus.add("role " + r.name() + " keeps " + (r.current() - r.desired())
                        + " replica(s) beyond spec, leaving through the retirement protocol");
            }
            if (r.updated() < r.current()) {
                outdated.add("role " + r.name() + " has " + (r.current() - r.updated())
                        + " replica(s) at an older configuration, each retired and replaced in turn");
            }
            if (r.current() < r.desired()) {
                creating.add("role " + r.name() + " has " + r.current() + "/" + r.desired() + " replicas");
            }
        }
        if (!surplus.isEmpty()) {
            return Conditions.next(
                    previous,
                    Conditions.REPLICAS_UP_TO_DATE,
                    false,
                    REASON_SCALING_DOWN,
                    String.join("; ", surplus),
                    generation,
                    now);
        }
        if (!outdated.isEmpty()) {
            return Conditions.next(
                    previous,
                    Conditions.REPLICAS_UP_TO_DATE,
                    false,
                    REASON_ROLLOUT,
                    String.join("; ", outdated),
                    generation,
                    now);
        }
        if (!creating.isEmpty()) {
            return Conditions.next(
                    previous,
                    Conditions.REPLICAS_UP_TO_DATE,
                    false,
                    REASON_CREATING,
                    String.join("; ", creating),
                    generation,
                    now);
        }
        return Conditions.next(
                previous,
                Conditions.REPLICAS_UP_TO_DATE,
                true,
                "UpToDate",
                "every role has exactly its desired replicas at the current configuration",
                generation,
                now);
    }

    private static String summary(List<RoleStatus> roles) {
        return roles.stream()
                .map(r -> r.name() + " " + r.ready() + "/" + r.desired())
                .collect(Collectors.joining(", "));
    }
}
