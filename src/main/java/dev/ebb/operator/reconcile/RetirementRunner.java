package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.config.EbbConfig;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.lifecycle.LeaseGuard;
import dev.ebb.operator.observe.EventRecorder;
import dev.ebb.operator.observe.Metrics;
import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.MemberWork;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.retire.Action;
import dev.ebb.operator.retire.Classification;
import dev.ebb.operator.retire.Member;
import dev.ebb.operator.retire.NextRetirement;
import dev.ebb.operator.retire.Observation;
import dev.ebb.operator.retire.ReplicaClassifier;
import dev.ebb.operator.retire.Retirement;
import dev.ebb.operator.retire.RetirementMachine;
import dev.ebb.operator.retire.RetirementRecord;
import dev.ebb.operator.retire.RetirementRecords;
import dev.ebb.operator.retire.RetirementState;
import dev.ebb.operator.route.GatewayMembership;
import dev.ebb.operator.route.RouterProbe;
import dev.ebb.operator.route.RouterView;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.URLUtils;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * The shell around the retirement machine: it turns the caches, the router and the member reads into an observation,
 * and carries out what the machine decides once the new state is persisted. Every decision is the machine's or
 * {@link NextRetirement}'s.
 */
@ApplicationScoped
// created with the application, so its meters are scraped before it is first used
@Startup
public class RetirementRunner {
    /**
     * Members are read once a second while a retirement drains; a retirement that just ended gets one more pass too,
     * where the next replica to retire, if any, starts.
     */
    static final Duration PASS_INTERVAL = Duration.ofSeconds(1);
    /** An aborted retirement is looked at this often while it waits, so a retry is never late by more. */
    static final Duration WAITING_LOOK = Duration.ofSeconds(10);

    private static final Logger LOG = Logger.getLogger(RetirementRunner.class);
    static final String REASON_ROLLOUT_STEP = "RolloutStep";
    static final String REASON_MAINTENANCE_MOVE = "NodeMaintenanceMove";
    static final String REASON_MEMBER_LEAVING = "ReplicaMemberLeaving";

    /**
     * What one retirement did in a pass.
     *
     * @param record its state after the pass
     * @param actions what to do once that is persisted
     * @param endedNow whether it ended in this pass
     * @param begun whether it began in this pass
     */
    public record Outcome(RetirementRecord record, List<Action> actions, boolean endedNow, boolean begun) {}

    /**
     * One pass's outcome.
     *
     * @param outcomes every retirement stepped, called off or begun
     * @param kept aborted records whose replica is still to leave, kept on record unchanged
     * @param lookAgainIn when the next pass is due, if a retirement needs one without any event
     */
    public record Pass(List<Outcome> outcomes, List<RetirementRecord> kept, Optional<Duration> lookAgainIn) {
        /** What status.retirements[] should say: every record but the completed ones, by role and ordinal. */
        public List<RetirementRecord> records() {
            return Stream.concat(outcomes.stream().map(Outcome::record), kept.stream())
                    .filter(r -> r.retirement().state() != RetirementState.Completed)
                    .sorted(Comparator.comparing(
                                    (RetirementRecord r) -> r.retirement().role())
                            .thenComparingInt(r -> r.retirement().ordinal()))
                    .toList();
        }

        public List<RetirementStatus> statuses() {
            return records().stream().map(RetirementRecords::toStatus).toList();
        }

        /** Whether a retirement began in this pass, on the choice the candidates' readings made. */
        public boolean began() {
            return outcomes.stream().anyMatch(Outcome::begun);
        }
    }

    private final KubernetesClient client;
    private final ReadLedger reads;
    private final RouterProbe router;
    private final EventRecorder events;
    private final Map<RetirementState, Counter> outcomes = new EnumMap<>(RetirementState.class);
    private final Map<RetirementState, Timer> durations = new EnumMap<>(RetirementState.class);
    /**
     * With a router, how long a request sent just before the withdrawal may sit in an engine's front end, unseen by the
     * gauges: as long as the drain hook lets an engine serve on undisturbed after a delete, for the same requests.
     * vLLM 0.32.0 on 2 cores showed a request in its gauges 0.03 s after it was sent with a short prompt and 0.5 s
     * with 6,000 words (the engine tier's RealVllmIT).
     */
    static final Duration FRONT_END_LAG = Duration.ofSeconds(DrainTimelines.SETTLE);

    private final Duration endpointPropagation;
    private final Duration quietPeers;
    private final RetirementMachine machine;
    private final LeaseGuard lease;

    public RetirementRunner(
            KubernetesClient client,
            ReadLedger reads,
            RouterProbe router,
            EventRecorder events,
            MeterRegistry registry,
            EbbConfig config,
            RetirementMachine machine,
            LeaseGuard lease) {
        this.client = client;
        this.lease = lease;
        this.machine = machine;
        this.reads = reads;
        this.router = router;
        this.events = events;
        this.endpointPropagation = config.retirement().endpointPropagation();
        this.quietPeers = config.retirement().quietPeers();
        // both outcomes exist from the start, at zero, so a scrape sees the series before the first retirement ends
        for (RetirementState end : List.of(RetirementState.Completed, RetirementState.Aborted)) {
            String outcome = end.name().toLowerCase(Locale.ROOT);
            outcomes.put(
                    end,
                    Counter.builder(Metrics.RETIREMENTS)
                            .tag(Metrics.OUTCOME, outcome)
                            .description("retirements that ended, by outcome")
                            .register(registry));
            durations.put(
                    end,
                    Timer.builder(Metrics.RETIREMENT_DURATION)
                            .tag(Metrics.OUTCOME, outcome)
                            .description("time from the start of a retirement to its end")
                            .register(registry));
        }
    }

    /**
     * @param candidates the replicas to take away now, in the order they go
     * @param later replicas to take away in a later pass, whose aborts are kept meanwhile
     * @param routerPods the Pods of the deployment's router, each of which is asked during a withdrawal
     */
    public Pass plan(
            ModelDeployment md,
            Inventory inventory,
            Collection<Pod> pods,
            List<NextRetirement.Candidate> candidates,
            Collection<NextRetirement.Replica> later,
            NextRetirement.RetryPolicy retry,
            Collection<EndpointSlice> slices,
            Collection<Pod> routerPods,
            Instant now) {
        List<RetirementRecord> records = RetirementRecords.fromStatus(md.getStatus());
        int persisted = md.getStatus() == null || md.getStatus().retirements() == null
                ? 0
                : md.getStatus().retirements().size();
        if (records.size() < persisted) {
            LOG.warnf(
                    "%d entries of status.retirements of %s/%s cannot be read back; they are dropped and the work is looked at afresh",
                    persisted - records.size(),
                    md.getMetadata().getNamespace(),
                    md.getMetadata().getName());
        }
        NextRetirement.Plan plan =
                NextRetirement.decide(records, RetirementRecords.aborts(md.getStatus()), candidates, later, retry, now);
        List<Outcome> outcomes = new ArrayList<>();
        for (NextRetirement.Advance advance : plan.advance()) {
            Retirement current = advance.current().retirement();
            outcomes.add(stepped(
                    advance.current(),
                    machine.step(
                            current,
                            observe(md, current, pods, slices, routerPods, now),
                            endpointPropagation,
                            FRONT_END_LAG,
                            quietPeers)));
        }
        for (NextRetirement.Cancel cancel : plan.cancel()) {
            outcomes.add(
                    stepped(cancel.current(), machine.cancel(cancel.current().retirement(), now)));
        }
        for (NextRetirement.Begin begin : plan.begin()) {
            outcomes.add(begin(md, inventory, begin, routerPods, retry.requestedToken(), now));
        }
        Optional<Duration> lookAgainIn = Optional.empty();
        if (!outcomes.isEmpty()) {
            lookAgainIn = Optional.of(PASS_INTERVAL);
        } else if (!candidates.isEmpty() || !plan.keptAborted().isEmpty()) {
            Duration untilRetry = plan.soonestRetry()
                    .map(at -> Duration.between(now, at).plus(PASS_INTERVAL))
                    .orElse(WAITING_LOOK);
            lookAgainIn = Optional.of(untilRetry.compareTo(WAITING_LOOK) < 0 ? untilRetry : WAITING_LOOK);
        }
        return new Pass(List.copyOf(outcomes), plan.keptAborted(), lookAgainIn);
    }

    private Outcome begin(
            ModelDeployment md,
            Inventory inventory,
            NextRetirement.Begin begin,
            Collection<Pod> routerPods,
            Optional<String> token,
            Instant now) {
        NextRetirement.Candidate candidate = begin.candidate();
        List<Pod> members =
                inventory.replicas(candidate.role()).get(candidate.ordinal()).members();
        Classification classification = ReplicaClassifier.classify(members);
        List<Member> targets = members.stream()
                .map(p -> new Member(p.getMetadata().getName(), p.getMetadata().getUid(), engineContainerId(p)))
                .toList();
        RetirementMachine.Step step = machine.begin(
                candidate.role(),
                candidate.ordinal(),
                begin.cause(),
                targets,
                classification,
                dispatchBaseline(md, routerPods, members, classification),
                candidate.drainBudget(),
                now);
        RetirementRecord record =
                new RetirementRecord(step.retirement(), candidate.chosenBecause(), token, begin.attempt());
        return new Outcome(record, step.actions(), step.retirement().state().ended(), true);
    }

    /**
     * What the router has counted for the targets, read before their withdrawal is written (the machine withdraws
     * only once this record is persisted), so that a dispatch made after it can never hide in the baseline. Without a
     * router nothing is counted; a router that cannot be read gives none, and the machine waits for one.
     */
    private Optional<Map<String, Double>> dispatchBaseline(
            ModelDeployment md, Collection<Pod> routerPods, List<Pod> members, Classification classification) {
        if (md.getSpec().router() == null
                || classification instanceof Classification.Refused
                || classification instanceof Classification.Unreachable) {
            return Optional.of(Map.of());
        }
        RouterView view = router.view(md, routerPods, members);
        return view.selects().isPresent() ? Optional.of(view.dispatches()) : Optional.empty();
    }

    private static Outcome stepped(RetirementRecord before, RetirementMachine.Step step) {
        Retirement after = step.retirement();
        return new Outcome(
                before.after(after),
                step.actions(),
                after.state().ended() && !before.retirement().state().ended(),
                false);
    }

    private Observation observe(
            ModelDeployment md,
            Retirement current,
            Collection<Pod> pods,
            Collection<EndpointSlice> slices,
            Collection<Pod> routerPods,
            Instant now) {
        Map<String, Pod> byName =
                pods.stream().collect(Collectors.toMap(p -> p.getMetadata().getName(), p -> p, (a, b) -> a));
        Map<String, Observation.Present> present = new HashMap<>();
        for (Member member : current.targets()) {
            Pod pod = byName.get(member.name());
            if (pod != null) {
                present.put(
                        member.name(),
                        new Observation.Present(
                                pod.getMetadata().getUid(),
                                engineContainerId(pod),
                                pod.getMetadata().getDeletionTimestamp() != null));
            }
        }
        // past the deletion the withdrawal no longer matters, and nothing about it is claimed
        Observation.Withdrawal withdrawal = current.state().pastDeletion()
                ? new Observation.Withdrawal(
                        md.getSpec().router() != null, Set.of(), Optional.empty(), Optional.empty(), Map.of())
                : withdrawal(md, current, pods, slices, routerPods);
        Map<String, MemberWork> work = reads.collect(operation(md, current));
        Map<String, Reading> gauges = new HashMap<>();
        Map<String, ConnectionRead.Peers> connections = new HashMap<>();
        Map<String, Double> requests = new HashMap<>();
        work.forEach((member, read) -> {
            gauges.put(member, read.gauges());
            read.connections().ifPresent(peers -> connections.put(member, peers));
            read.requests().ifPresent(total -> requests.put(member, total));
        });
        return new Observation(now, present, withdrawal, gauges, connections, requests);
    }

    private Observation.Withdrawal withdrawal(
            ModelDeployment md,
            Retirement current,
            Collection<Pod> pods,
            Collection<EndpointSlice> slices,
            Collection<Pod> routerPods) {
        Map<String, String> reservedUids =
                current.targets().stream().collect(Collectors.toMap(Member::name, Member::uid));
        String service = Names.roleService(md.getMetadata().getName(), current.role());
        List<EndpointSlice> roleSlices = slices.stream()
                .filter(slice -> service.equals(labels(slice).get(Labels.SERVICE_NAME)))
                .toList();
        // a Service always has a slice, if an empty one: none known means the cache cannot say, not that nothing lists
        // the targets
        Optional<Boolean> endpointsClear = roleSlices.isEmpty()
                ? Optional.empty()
                : Optional.of(roleSlices.stream()
                        .flatMap(slice -> slice.getEndpoints() == null ? Stream.empty() : slice.getEndpoints().stream())
                        .noneMatch(endpoint -> endpoint.getTargetRef() != null
                                && reservedUids.containsKey(
                                        endpoint.getTargetRef().getName())));
        List<Pod> members = pods.stream()
                .filter(p -> p.getMetadata().getUid() != null
                        && p.getMetadata()
                                .getUid()
                                .equals(reservedUids.get(p.getMetadata().getName())))
                .toList();
        Set<String> stillServing = members.stream()
                .filter(p -> PodFacts.label(p, Labels.SERVING)
                        .filter(Labels.SERVING_NO::equals)
                        .isEmpty())
                .map(p -> p.getMetadata().getName())
                .collect(Collectors.toSet());
        boolean routed = md.getSpec().router() != null;
        RouterView view =
                routed ? router.view(md, routerPods, members) : RouterView.unavailable("the deployment has no router");
        return new Observation.Withdrawal(
                routed, stillServing, endpointsClear, view.selects(), view.dispatches(), view.unknownBecause());
    }

    /**
     * Carries out what the pass decided; called only after its record is persisted.
     *
     * @param routerPods the Pods of the deployment's router, each of which is asked when the router must be told
     */
    public void carryOut(ModelDeployment md, Pass pass, Collection<Pod> pods, Collection<Pod> routerPods) {
        List<String> takenAway = pass.outcomes().stream()
                .filter(o -> o.actions().stream().anyMatch(RetirementRunner::takesAway))
                .map(o -> o.record().retirement().role() + "/"
                        + o.record().retirement().ordinal())
                .toList();
        if (!takenAway.isEmpty()
                && !lease.stillLeads(
                        "the retirement actions of " + md.getMetadata().getNamespace() + "/"
                                + md.getMetadata().getName() + " for replica(s) " + takenAway)) {
            return;
        }
        Map<String, Pod> byName =
                pods.stream().collect(Collectors.toMap(p -> p.getMetadata().getName(), p -> p, (a, b) -> a));
        for (Outcome outcome : pass.outcomes()) {
            Retirement retirement = outcome.record().retirement();
            if (outcome.begun() && NextRetirement.ROLLOUT.equals(retirement.cause())) {
                events.normal(
                        md,
                        REASON_ROLLOUT_STEP,
                        "replacing replica " + retirement.ordinal() + " of role " + retirement.role() + " ("
                                + outcome.record().chosenBecause()
                                + "): it is retired first, and its replacement created once its Pods are gone");
            }
            if (outcome.begun() && NextRetirement.NODE_MAINTENANCE.equals(retirement.cause())) {
                events.normal(
                        md,
                        REASON_MAINTENANCE_MOVE,
                        "moving replica " + retirement.ordinal() + " of role " + retirement.role() + ": "
                                + outcome.record().chosenBecause()
                                + "; it is withdrawn, proven idle and deleted, and the drain then finds it gone");
            }
            for (Action action : outcome.actions()) {
                carryOut(md, retirement, action, byName, routerPods);
            }
            if (outcome.endedNow()) {
                reads.forget(operation(md, retirement));
                count(retirement);
            }
        }
    }

    /** What takes traffic or a replica away, and so is done only by an operator that still leads. */
    private static boolean takesAway(Action action) {
        return action instanceof Action.Withdraw || action instanceof Action.Unroute || action instanceof Action.Delete;
    }

    private void carryOut(
            ModelDeployment md,
            Retirement retirement,
            Action action,
            Map<String, Pod> byName,
            Collection<Pod> routerPods) {
        if (action instanceof Action.Withdraw withdraw) {
            withdraw.members().forEach(m -> setServing(md, m, false));
        } else if (action instanceof Action.Unroute unroute) {
            router.withdraw(md, routerPods, reserved(unroute.members(), byName));
        } else if (action instanceof Action.Restore restore) {
            // only members whose withdrawal was written can have been dropped by the router on the operator's word
            List<Pod> withdrawn = reserved(restore.members(), byName).stream()
                    .filter(p -> PodFacts.label(p, Labels.SERVING)
                            .filter(Labels.SERVING_NO::equals)
                            .isPresent())
                    .toList();
            restore.members().forEach(m -> setServing(md, m, true));
            if (!withdrawn.isEmpty()) {
                router.restore(md, routerPods, withdrawn);
            }
        } else if (action instanceof Action.Delete delete) {
            delete.members().forEach(m -> deleteExactly(md, m));
        } else if (action instanceof Action.ReadMembers read) {
            read.members().stream()
                    .map(byName::get)
                    .filter(Objects::nonNull)
                    .forEach(pod -> ReplicaClassifier.engineOf(pod)
                            .ifPresent(engine -> reads.start(
                                    operation(md, retirement),
                                    pod,
                                    engine,
                                    md.getSpec().router() == null ? ServicePort.of(pod) : Optional.empty())));
        } else if (action instanceof Action.Announce announce) {
            if (announce.warning()) {
                events.warning(md, announce.reason().wire(), announce.message());
            } else {
                events.normal(md, announce.reason().wire(), announce.message());
            }
        }
    }

    /** The reserved members' Pods among those seen; one recreated under a reserved name is none of the retirement's. */
    private static List<Pod> reserved(List<Member> members, Map<String, Pod> byName) {
        return members.stream()
                .filter(m -> byName.containsKey(m.name())
                        && m.uid().equals(byName.get(m.name()).getMetadata().getUid()))
                .map(m -> byName.get(m.name()))
                .toList();
    }

    /**
     * Outside retirements, a replica is out of traffic exactly while one of its members terminates (see
     * {@link ServingLabels}): the rest of such a replica is withdrawn, from the router's own lists too where it keeps
     * them, and a Pod left withdrawn by nothing (an operator stopped between two writes, a restore that failed, a
     * member that has left) serves again.
     */
    public void correctServingLabels(
            ModelDeployment md, Collection<Pod> pods, Collection<Pod> routerPods, List<RetirementRecord> records) {
        List<Retirement> retirements =
                records.stream().map(RetirementRecord::retirement).toList();
        List<Member> withdrawn = ServingLabels.toWithdraw(pods, retirements);
        if (!withdrawn.isEmpty()
                && !lease.stillLeads(
                        "withdrawing " + withdrawn.stream().map(Member::name).toList() + " of "
                                + md.getMetadata().getNamespace() + "/"
                                + md.getMetadata().getName() + " while another member of their replica terminates")) {
            return;
        }
        for (Member member : withdrawn) {
            setServing(md, member, false);
            events.normal(
                    md,
                    REASON_MEMBER_LEAVING,
                    member.name() + " no longer serves while another member of its replica terminates:"
                            + " the engine's collective spans every member and stops with the one that leaves");
        }
        if (!withdrawn.isEmpty() && md.getSpec().router() != null) {
            Set<String> names = withdrawn.stream().map(Member::name).collect(Collectors.toSet());
            router.withdraw(
                    md,
                    routerPods,
                    pods.stream()
                            .filter(p -> names.contains(p.getMetadata().getName()))
                            .toList());
        }
        ServingLabels.toRestore(pods, retirements).forEach(member -> setServing(md, member, true));
    }

    /**
     * What the router's own lists of engines must be told in this pass, for a router that keeps them (SGLang's
     * gateway), and which serving replicas a router Pod does not route to. Decided from the Pods whose serving label
     * the pass leaves as it is: those it relabels (a retirement's withdrawal or restore, a label correction) are told
     * to the router by that step itself, and seen here on the next pass.
     */
    public Optional<GatewayMembership.Plan> routerMembership(
            ModelDeployment md, Collection<Pod> pods, Collection<Pod> routerPods, Pass pass) {
        if (md.getSpec().router() == null) {
            return Optional.empty();
        }
        Set<String> relabelled = new HashSet<>(ServingLabels.relabelled(
                pods, pass.records().stream().map(RetirementRecord::retirement).toList()));
        pass.outcomes()
                .forEach(o -> o.record().retirement().targets().forEach(target -> relabelled.add(target.name())));
        List<Pod> settled = pods.stream()
                .filter(p -> !relabelled.contains(p.getMetadata().getName()))
                .toList();
        return router.workerLists(md, routerPods).map(lists -> GatewayMembership.decide(lists, settled));
    }

    /** Sends the router what {@link #routerMembership} decided; called only after the pass's status is persisted. */
    public void keepRouterInStep(
            ModelDeployment md, Collection<Pod> routerPods, Optional<GatewayMembership.Plan> plan) {
        if (plan.isEmpty() || plan.get().nothingToSend()) {
            return;
        }
        GatewayMembership.Plan p = plan.get();
        String name = md.getMetadata().getNamespace() + "/" + md.getMetadata().getName();
        if (p.remove().values().stream().anyMatch(urls -> !urls.isEmpty())
                && !lease.stillLeads("removing " + p.remove() + " from the router of " + name)) {
            return;
        }
        LOG.infof("telling the router of %s: removing %s, adding back %s", name, p.remove(), p.add());
        router.tell(md, routerPods, p);
    }

    private void count(Retirement ended) {
        outcomes.get(ended.state()).increment();
        durations.get(ended.state()).record(Duration.between(ended.startedAt(), ended.phaseStartedAt()));
    }

    private void setServing(ModelDeployment md, Member member, boolean serving) {
        String value = serving ? Labels.SERVING_YES : Labels.SERVING_NO;
        try {
            client.pods()
                    .inNamespace(md.getMetadata().getNamespace())
                    .withName(member.name())
                    .edit(pod -> {
                        if (!pod.getMetadata().getUid().equals(member.uid())) {
                            throw new IllegalStateException("pod " + member.name() + " was replaced");
                        }
                        return new PodBuilder(pod)
                                .editMetadata()
                                .addToLabels(Labels.SERVING, value)
                                .endMetadata()
                                .build();
                    });
        } catch (KubernetesClientException | IllegalStateException e) {
            // the next pass observes what exists and the machine decides again
            LOG.infof("could not set %s=%s on %s: %s", Labels.SERVING, value, member.name(), e.getMessage());
        }
    }

    /** Deletes exactly the member the retirement reserved: a Pod recreated under the same name is left alone. */
    private void deleteExactly(ModelDeployment md, Member member) {
        String url = URLUtils.join(
                client.getMasterUrl().toString(),
                "api",
                "v1",
                "namespaces",
                md.getMetadata().getNamespace(),
                "pods",
                member.name());
        try {
            client.raw(
                    url,
                    "DELETE",
                    new DeleteOptionsBuilder()
                            .withNewPreconditions()
                            .withUid(member.uid())
                            .endPreconditions()
                            .build());
        } catch (KubernetesClientException e) {
            // the machine asks again on the next pass for as long as the member is there and not being deleted
            LOG.infof("delete of %s (uid %s) not done: %s", member.name(), member.uid(), e.getMessage());
        }
    }

    /** Retirements that begin in the same pass share their start: the replica tells them apart. */
    private static ReadLedger.Operation operation(ModelDeployment md, Retirement retirement) {
        return new ReadLedger.Operation(
                md.getMetadata().getUid(),
                retirement.role() + "/" + retirement.ordinal() + "@" + retirement.startedAt());
    }

    private static String engineContainerId(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return null;
        }
        return pod.getStatus().getContainerStatuses().stream()
                .filter(c -> EnginePod.CONTAINER.equals(c.getName()))
                .map(c -> c.getContainerID())
                .filter(Objects::nonNull)
                .findFirst()
                .orElse(null);
    }

    private static Map<String, String> labels(HasMetadata resource) {
        return resource.getMetadata().getLabels() == null
                ? Map.of()
                : resource.getMetadata().getLabels();
    }
}
