package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.lifecycle.LeaseGuard;
import dev.ebb.operator.observe.EventRecorder;
import dev.ebb.operator.observe.Metrics;
import dev.ebb.operator.retire.Action;
import dev.ebb.operator.retire.Member;
import dev.ebb.operator.retire.NextRetirement;
import dev.ebb.operator.retire.ReplicaClassifier;
import dev.ebb.operator.retire.Retirement;
import dev.ebb.operator.retire.RetirementRecord;
import dev.ebb.operator.retire.RetirementState;
import dev.ebb.operator.route.GatewayMembership;
import dev.ebb.operator.route.RouterProbe;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.URLUtils;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Carries out what a retirement pass decided, once its record is persisted: serving labels written, the router told,
 * members read and deleted, Events sent and the outcomes counted. Only an operator that still leads takes anything
 * away.
 */
@ApplicationScoped
// created with the application, so its meters are scraped before it is first used
@Startup
public class RetirementActions {
    private static final Logger LOG = Logger.getLogger(RetirementActions.class);
    static final String REASON_ROLLOUT_STEP = "RolloutStep";
    static final String REASON_MAINTENANCE_MOVE = "NodeMaintenanceMove";
    static final String REASON_MEMBER_LEAVING = "ReplicaMemberLeaving";

    private final KubernetesClient client;
    private final ReadLedger reads;
    private final RouterProbe router;
    private final EventRecorder events;
    private final LeaseGuard lease;
    private final Map<RetirementState, Counter> outcomes = new EnumMap<>(RetirementState.class);
    private final Map<RetirementState, Timer> durations = new EnumMap<>(RetirementState.class);

    public RetirementActions(
            KubernetesClient client,
            ReadLedger reads,
            RouterProbe router,
            EventRecorder events,
            MeterRegistry registry,
            LeaseGuard lease) {
        this.client = client;
        this.reads = reads;
        this.router = router;
        this.events = events;
        this.lease = lease;
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
     * Carries out what the pass decided; called only after its record is persisted.
     *
     * @param routerPods the Pods of the deployment's router, each of which is asked when the router must be told
     */
    public void carryOut(
            ModelDeployment md, RetirementRunner.Pass pass, Collection<Pod> pods, Collection<Pod> routerPods) {
        List<String> takenAway = pass.outcomes().stream()
                .filter(o -> o.actions().stream().anyMatch(RetirementActions::takesAway))
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
        for (RetirementRunner.Outcome outcome : pass.outcomes()) {
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
                reads.forget(ReadLedger.Operation.of(md, retirement));
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
                                    ReadLedger.Operation.of(md, retirement),
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
}
