package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.AbortedRetirement;
import dev.ebb.operator.api.v1alpha1.DrainStatus;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.drain.DrainTimeline;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.retire.RetirementState;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
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

    private StatusAggregator() {
    }

    public static ModelDeploymentStatus accepted(long generation, DesiredDeployment deployment, Map<String, String> hashes,
            Inventory inventory, Optional<RouterStatus> router, Optional<RetirementStatus> retirement, List<AbortedRetirement> aborted,
            List<Ownership.Conflict> conflicts,
            List<Condition> previous, Instant now) {
        List<RoleStatus> roles = deployment.roles().stream()
                .map(role -> roleStatus(deployment, role, hashes.get(role.name()), inventory.replicas(role.name())))
                .toList();

        List<String> notReady = roles.stream().filter(r -> r.ready() < r.desired())
                .map(r -> "role " + r.name() + " has " + r.ready() + "/" + r.desired() + " replicas ready").toList();
        Condition ready = conflicts.isEmpty()
                ? Conditions.next(previous, Conditions.READY, notReady.isEmpty(),
                        notReady.isEmpty() ? "AllReplicasReady" : "ReplicasNotReady",
                        notReady.isEmpty() ? "every role has its desired replicas ready" : String.join("; ", notReady),
                        generation, now)
                : nameConflict(conflicts, generation, previous, now);
        Condition upToDate = upToDate(roles, generation, previous, now);

        List<Condition> conditions = new ArrayList<>(List.of(ready, upToDate, retiring(retirement, generation, previous, now)));
        router.ifPresent(r -> conditions.add(routerReady(r, generation, previous, now)));
        return new ModelDeploymentStatus(generation,
                !conflicts.isEmpty() ? PHASE_DEGRADED : notReady.isEmpty() ? PHASE_READY : PHASE_STARTING,
                summary(roles), roles, router.orElse(null), retirement.orElse(null), List.copyOf(aborted), List.copyOf(conditions));
    }

    /**
     * Names this deployment renders that another owner's objects hold: those objects are left alone, so what they
     * stand for is missing here until one of the two is renamed.
     */
    private static Condition nameConflict(List<Ownership.Conflict> conflicts, long generation, List<Condition> previous, Instant now) {
        String held = conflicts.stream().map(Ownership.Conflict::sentence).distinct().collect(Collectors.joining("; "));
        return Conditions.next(previous, Conditions.READY, false, REASON_NAME_CONFLICT,
                held + "; they are left as they are, and this ModelDeployment goes without them until it or a role is renamed",
                generation, now);
    }

    /**
     * A rejected spec changes nothing that exists; status says which fields are wrong. It takes nothing away either, so
     * no aborted retirement holds a replica back.
     */
    public static ModelDeploymentStatus rejected(long generation, Resolution.Rejected rejection, Optional<RetirementStatus> retirement,
            List<Condition> previous, Instant now) {
        Condition ready = Conditions.next(previous, Conditions.READY, false, REASON_INVALID_SPEC, rejection.summary(), generation, now);
        Condition upToDate = Conditions.next(previous, Conditions.REPLICAS_UP_TO_DATE, false, REASON_INVALID_SPEC,
                "nothing is created or changed until the spec is fixed", generation, now);
        return new ModelDeploymentStatus(generation, PHASE_DEGRADED, null, List.of(), null, retirement.orElse(null), List.of(),
                List.of(ready, upToDate, retiring(retirement, generation, previous, now)));
    }

    /**
     * While a deleted ModelDeployment's Pods drain on their way out. The rest of the last status is kept as it was:
     * it is the last word on what the deployment was doing.
     */
    public static ModelDeploymentStatus deleting(ModelDeploymentStatus last, long generation, int podsLeft, Instant now) {
        List<Condition> previous = last == null || last.conditions() == null ? List.of() : last.conditions();
        Condition ready = Conditions.next(previous, Conditions.READY, false, REASON_DELETING,
                podsLeft + " Pod(s) still draining their requests; the router and the Services stay until they are gone",
                generation, now);
        List<Condition> conditions = new ArrayList<>(previous.stream().filter(c -> !Conditions.READY.equals(c.getType())).toList());
        conditions.add(0, ready);
        return last == null
                ? new ModelDeploymentStatus(generation, PHASE_DELETING, null, List.of(), null, null, List.of(), List.copyOf(conditions))
                : new ModelDeploymentStatus(generation, PHASE_DELETING, last.rolesSummary(), last.roles(), last.router(),
                        last.retirement(), last.abortedRetirements(), List.copyOf(conditions));
    }

    /** Whether the router has a replica ready; while it has none, no withdrawal can be confirmed through it. */
    private static Condition routerReady(RouterStatus router, long generation, List<Condition> previous, Instant now) {
        boolean ready = Boolean.TRUE.equals(router.ready());
        return Conditions.next(previous, Conditions.ROUTER_READY, ready, ready ? "RouterAvailable" : "RouterNotReady",
                ready ? router.name() + " has " + router.readyReplicas() + " replica(s) ready"
                        : router.name() + " has no replica ready: clients reach no role through it, and retirements hold until it answers",
                generation, now);
    }

    /** True while a retirement is under way; an aborted one stays on record, False, with its reason. */
    private static Condition retiring(Optional<RetirementStatus> retirement, long generation, List<Condition> previous, Instant now) {
        if (retirement.isEmpty()) {
            return Conditions.next(previous, Conditions.RETIREMENT_PROGRESSING, false, REASON_NO_RETIREMENT,
                    "no replica is being retired", generation, now);
        }
        RetirementStatus r = retirement.get();
        String subject = "replica " + r.replicaOrdinal() + " of role " + r.roleName() + " (" + r.cause() + ", " + r.state() + "): ";
        boolean aborted = RetirementState.Aborted.name().equals(r.state());
        return Conditions.next(previous, Conditions.RETIREMENT_PROGRESSING, !aborted, r.reason(), subject + r.message(), generation, now);
    }

    private static RoleStatus roleStatus(DesiredDeployment deployment, DesiredRole role, String hash,
            NavigableMap<Integer, ObservedReplica> replicas) {
        int ready = (int) replicas.values().stream().filter(ObservedReplica::ready).count();
        int updated = (int) replicas.values().stream().filter(r -> r.configHash().filter(hash::equals).isPresent()).count();
        return new RoleStatus(role.name(), role.kind().name(), role.replicas(), replicas.size(), ready, updated, role.takeOver(),
                drainStatus(PodRenderer.drainTimeline(deployment, role)));
    }

    private static DrainStatus drainStatus(DrainTimeline timeline) {
        List<DrainStatus.Warning> warnings = timeline.warnings().stream()
                .map(w -> new DrainStatus.Warning(w.reason(), w.message())).toList();
        return timeline.hooked()
                ? new DrainStatus(timeline.grace().orElse(null), timeline.lastReadStartsBy(), timeline.sigtermBy(), warnings)
                : new DrainStatus(timeline.grace().orElse(null), null, null, warnings);
    }

    private static Condition upToDate(List<RoleStatus> roles, long generation, List<Condition> previous, Instant now) {
        List<String> surplus = new ArrayList<>();
        List<String> outdated = new ArrayList<>();
        List<String> creating = new ArrayList<>();
        for (RoleStatus r : roles) {
            if (r.current() > r.desired()) {
                surplus.add("role " + r.name() + " keeps " + (r.current() - r.desired())
                        + " replica(s) beyond spec, leaving one at a time through the retirement protocol");
            }
            if (r.updated() < r.current()) {
                outdated.add("role " + r.name() + " has " + (r.current() - r.updated())
                        + " replica(s) at an older configuration, replaced one at a time");
            }
            if (r.current() < r.desired()) {
                creating.add("role " + r.name() + " has " + r.current() + "/" + r.desired() + " replicas");
            }
        }
        if (!surplus.isEmpty()) {
            return Conditions.next(previous, Conditions.REPLICAS_UP_TO_DATE, false, REASON_SCALING_DOWN,
                    String.join("; ", surplus), generation, now);
        }
        if (!outdated.isEmpty()) {
            return Conditions.next(previous, Conditions.REPLICAS_UP_TO_DATE, false, REASON_ROLLOUT,
                    String.join("; ", outdated), generation, now);
        }
        if (!creating.isEmpty()) {
            return Conditions.next(previous, Conditions.REPLICAS_UP_TO_DATE, false, REASON_CREATING,
                    String.join("; ", creating), generation, now);
        }
        return Conditions.next(previous, Conditions.REPLICAS_UP_TO_DATE, true, "UpToDate",
                "every role has exactly its desired replicas at the current configuration", generation, now);
    }

    private static String summary(List<RoleStatus> roles) {
        return roles.stream().map(r -> r.name() + " " + r.ready() + "/" + r.desired()).collect(Collectors.joining(", "));
    }
}
