package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.config.EbbConfig;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.retire.Action;
import dev.ebb.operator.retire.Classification;
import dev.ebb.operator.retire.Member;
import dev.ebb.operator.retire.NextRetirement;
import dev.ebb.operator.retire.ReplicaClassifier;
import dev.ebb.operator.retire.Retirement;
import dev.ebb.operator.retire.RetirementMachine;
import dev.ebb.operator.retire.RetirementRecord;
import dev.ebb.operator.retire.RetirementRecords;
import dev.ebb.operator.retire.RetirementState;
import dev.ebb.operator.route.GatewayMembership;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * One retirement pass: which retirements begin, advance or are called off ({@link NextRetirement}), each shown what
 * {@link RetirementObserver} saw and stepped by the {@link RetirementMachine}. It returns values; what they ask for is
 * done by {@link RetirementActions} once the pass's status is persisted.
 */
@ApplicationScoped
public class RetirementRunner {
    /**
     * Members are read once a second while a retirement drains; a retirement that just ended gets one more pass too,
     * where the next replica to retire, if any, starts.
     */
    static final Duration PASS_INTERVAL = Duration.ofSeconds(1);
    /** An aborted retirement is looked at this often while it waits, so a retry is never late by more. */
    static final Duration WAITING_LOOK = Duration.ofSeconds(10);

    private static final Logger LOG = Logger.getLogger(RetirementRunner.class);

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

    /**
     * With a router, how long a request sent just before the withdrawal may sit in an engine's front end, unseen by the
     * gauges: as long as the drain hook lets an engine serve on undisturbed after a delete, for the same requests.
     * vLLM 0.32.0 on 2 cores showed a request in its gauges 0.03 s after it was sent with a short prompt and 0.5 s
     * with 6,000 words (the engine tier's RealVllmIT).
     */
    static final Duration FRONT_END_LAG = Duration.ofSeconds(DrainTimelines.SETTLE);

    private final Duration endpointPropagation;
    private final Duration quietPeers;
    private final RetirementObserver observer;
    private final RetirementMachine machine;

    public RetirementRunner(RetirementObserver observer, EbbConfig config, RetirementMachine machine) {
        this.observer = observer;
        this.machine = machine;
        this.endpointPropagation = config.retirement().endpointPropagation();
        this.quietPeers = config.retirement().quietPeers();
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
                            observer.observe(md, current, pods, slices, routerPods, now),
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
        List<Member> targets = RetirementObserver.members(members);
        RetirementMachine.Step step = machine.begin(
                candidate.role(),
                candidate.ordinal(),
                begin.cause(),
                targets,
                classification,
                observer.dispatchBaseline(md, routerPods, members, classification),
                candidate.drainBudget(),
                now);
        RetirementRecord record =
                new RetirementRecord(step.retirement(), candidate.chosenBecause(), token, begin.attempt());
        return new Outcome(record, step.actions(), step.retirement().state().ended(), true);
    }

    private static Outcome stepped(RetirementRecord before, RetirementMachine.Step step) {
        Retirement after = step.retirement();
        return new Outcome(
                before.after(after),
                step.actions(),
                after.state().ended() && !before.retirement().state().ended(),
                false);
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
        return observer.workerLists(md, routerPods).map(lists -> GatewayMembership.decide(lists, settled));
    }
}
