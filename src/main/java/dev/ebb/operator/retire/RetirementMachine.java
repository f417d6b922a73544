package dev.ebb.operator.retire;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.retire.MemberReads.Verdict;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The retirement protocol as a pure function: (state, observation) → (next state, actions). It deletes a replica
 * only after the replica left every path to new work and each answering member read idle twice in a row on a
 * complete envelope, with no restart in between; anything it cannot prove holds the replica, within budgets.
 * Without a router, clients reach the replica through its Service, and each idle read must also find no client
 * connected to the member, the first of them only once the endpoint change has had time to reach every node; peers
 * that stay connected while no request reaches the member for a set time are bystanders and do not count. With a
 * router, the first read counts only once a request the router sent just before it let the replica go has had time to
 * pass the engine's front end (templating, tokenizing, fetching inputs), where no gauge counts it.
 * A bean so that it is injected where used; it holds no state, client, clock or I/O, and tests build it with {@code new}.
 */
@ApplicationScoped
public class RetirementMachine {
    private static final String AWAITING_BASELINE =
            "the router cannot be read yet; its dispatch counts are taken before the withdrawal is written, so it waits for them";

    public RetirementMachine() {}

    /** The next state and what to do about it. */
    public record Step(Retirement retirement, List<Action> actions) {}

    /**
     * @param dispatchBaseline the router's dispatch counts for the targets, read before anything is withdrawn (none
     *     counted without a router); empty when the router could not be read, and then the withdrawal waits for them
     */
    public Step begin(
            String role,
            int ordinal,
            String cause,
            List<Member> targets,
            Classification classification,
            Optional<Map<String, Double>> dispatchBaseline,
            Duration drainBudget,
            Instant now) {
        if (classification instanceof Classification.Refused refused) {
            Retirement aborted = new Retirement(
                    role,
                    ordinal,
                    cause,
                    List.copyOf(targets),
                    List.of(),
                    Optional.empty(),
                    RetirementState.Aborted,
                    refused.reason(),
                    refused.message(),
                    now,
                    now,
                    Map.of(),
                    Optional.empty(),
                    drainBudget);
            return NextRetirement.NODE_MAINTENANCE.equals(cause)
                    ? handBack(aborted, now, refused.message())
                    : new Step(aborted, List.of(new Action.Announce(true, refused.reason(), refused.message())));
        }
        if (classification instanceof Classification.Unreachable unreachable) {
            String message = "retiring replica " + ordinal + " of role " + role + " (" + cause + "): "
                    + unreachable.message() + "; deleting it";
            Retirement deleting = new Retirement(
                    role,
                    ordinal,
                    cause,
                    List.copyOf(targets),
                    List.of(),
                    Optional.empty(),
                    RetirementState.Deleting,
                    Reason.LEADER_GONE,
                    message,
                    now,
                    now,
                    Map.of(),
                    Optional.empty(),
                    drainBudget);
            return new Step(
                    deleting,
                    List.of(
                            new Action.Announce(false, Reason.LEADER_GONE, message),
                            new Action.Delete(deleting.targets())));
        }
        List<String> answering =
                classification instanceof Classification.Answerable a ? List.copyOf(a.answering()) : List.of();
        Optional<Classification.Held> held =
                classification instanceof Classification.Held h ? Optional.of(h) : Optional.empty();
        if (dispatchBaseline.isEmpty()) {
            String message =
                    "retiring replica " + ordinal + " of role " + role + " (" + cause + "): " + AWAITING_BASELINE;
            Retirement waiting = new Retirement(
                    role,
                    ordinal,
                    cause,
                    List.copyOf(targets),
                    answering,
                    held,
                    RetirementState.Withdrawing,
                    Reason.ROUTER_UNAVAILABLE,
                    message,
                    now,
                    now,
                    Map.of(),
                    Optional.empty(),
                    drainBudget);
            return new Step(waiting, List.of(new Action.Announce(true, Reason.ROUTER_UNAVAILABLE, message)));
        }
        String message =
                "retiring replica " + ordinal + " of role " + role + " (" + cause + "): withdrawing it from new work";
        Retirement started = new Retirement(
                role,
                ordinal,
                cause,
                List.copyOf(targets),
                answering,
                held,
                RetirementState.Withdrawing,
                Reason.STARTED,
                message,
                now,
                now,
                Map.of(),
                Optional.of(baselineFor(dispatchBaseline.get(), targets)),
                drainBudget);
        return new Step(
                started,
                List.of(new Action.Withdraw(started.targets()), new Action.Announce(false, Reason.STARTED, message)));
    }

    /**
     * The counts with a zero under each target's own name besides: a baseline taken is then never empty, which status
     * could not keep apart from none taken.
     */
    private static Map<String, Double> baselineFor(Map<String, Double> counts, List<Member> targets) {
        Map<String, Double> baseline = new HashMap<>(counts);
        targets.forEach(member -> baseline.putIfAbsent(member.name(), 0.0));
        return baseline;
    }

    /**
     * A retirement whose dispatch counts could not be read at its start takes them at the first pass the router answers,
     * and only then writes the withdrawal. Counts read once a member already carries serving=false (a record from before
     * baselines were kept) could hide a dispatch made since, so such a record is held until its budget aborts it.
     */
    private static Step awaitingBaseline(Retirement current, Observation seen) {
        Observation.Withdrawal w = seen.withdrawal();
        boolean nothingWithdrawnYet =
                current.targets().stream().allMatch(m -> w.stillServing().contains(m.name()));
        if (w.routerSelects().isPresent() && nothingWithdrawnYet) {
            String message = "retiring replica " + current.ordinal() + " of role " + current.role() + " ("
                    + current.cause() + "): the router's dispatch counts are read; withdrawing it from new work";
            Retirement withdrawing =
                    current.withBaseline(baselineFor(w.dispatches(), current.targets()), Reason.STARTED, message);
            return new Step(
                    withdrawing,
                    List.of(
                            new Action.Withdraw(current.targets()),
                            new Action.Announce(false, Reason.STARTED, message)));
        }
        String message = (nothingWithdrawnYet
                        ? AWAITING_BASELINE
                        : "the router's dispatch counts were not read before the withdrawal, so a dispatch since cannot be ruled out")
                + w.routerUnknownBecause().map(why -> " (" + why + ")").orElse("");
        if (Budgets.exhausted(current.phaseStartedAt(), Budgets.WITHDRAWING, seen.now())) {
            return abort(
                    current,
                    seen.now(),
                    Reason.ROUTER_UNAVAILABLE,
                    "withdrawal not confirmed within " + Budgets.WITHDRAWING.toSeconds() + " s: " + message);
        }
        return hold(current, Reason.ROUTER_UNAVAILABLE, message, current.reads());
    }

    /**
     * @param endpointPropagation without a router, how long after the endpoints were seen clear a node may still send a
     *     new connection through the Service to the replica; reads before then prove nothing
     * @param frontEndLag with a router, how long after the router was seen to send the replica nothing more a request it
     *     sent before may still be in an engine's front end, unseen by the gauges; reads before then prove nothing
     * @param quietPeers without a router, how long a member's gauges must read idle and its request counters stand still
     *     before the peers still connected to it are taken for bystanders (scrapers, probes) rather than clients
     */
    public Step step(
            Retirement current,
            Observation seen,
            Duration endpointPropagation,
            Duration frontEndLag,
            Duration quietPeers) {
        if (current.state().ended()) {
            return new Step(current, List.of());
        }
        if (!current.state().pastDeletion()) {
            Optional<Step> aborted = abortIfLost(current, seen);
            if (aborted.isPresent()) {
                return aborted.get();
            }
        }
        Duration margin = seen.withdrawal().routed() ? frontEndLag : endpointPropagation;
        return switch (current.state()) {
            case Withdrawing -> withdrawing(current, seen, margin);
            case Draining -> draining(current, seen, margin, quietPeers);
            case Deleting -> settle(current, seen);
            case Settling -> settling(current, seen);
            default -> new Step(current, List.of());
        };
    }

    /** A member gone or replaced before the deletion, or the whole budget spent: keep what is left. */
    private static Optional<Step> abortIfLost(Retirement current, Observation seen) {
        for (Member member : current.targets()) {
            Observation.Present now = seen.members().get(member.name());
            if (now == null || !now.uid().equals(member.uid()) || now.terminating()) {
                return Optional.of(abort(
                        current,
                        seen.now(),
                        Reason.TERMINATED_OUTSIDE,
                        "member " + member.name()
                                + " was terminated outside the operator; the rest of the replica is kept"));
            }
        }
        if (!seen.now().isBefore(current.deadline())) {
            return Optional.of(abort(
                    current,
                    seen.now(),
                    Reason.BUDGET_EXHAUSTED,
                    "the operation ran out of its "
                            + Budgets.whole(current.drainBudget()).toSeconds() + " s while "
                            + current.reason().wire() + ": "
                            + current.message()));
        }
        return Optional.empty();
    }

    private static Step withdrawing(Retirement current, Observation seen, Duration margin) {
        if (current.dispatchBaseline().isEmpty()) {
            return awaitingBaseline(current, seen);
        }
        Optional<Hold> hold = withdrawalHold(seen.withdrawal(), current.dispatchBaseline());
        if (hold.isPresent()) {
            if (Budgets.exhausted(current.phaseStartedAt(), Budgets.WITHDRAWING, seen.now())) {
                return abort(
                        current,
                        seen.now(),
                        hold.get().reason(),
                        "withdrawal not confirmed within " + Budgets.WITHDRAWING.toSeconds() + " s: "
                                + hold.get().message());
            }
            // a dispatch made while the router was still learning of the withdrawal is held for, and then the counts it
            // left are what the next pass compares with: only a count still moving keeps the withdrawal unconfirmed
            Retirement reference = hold.get().reason() == Reason.RECENT_DISPATCH
                    ? current.withBaseline(
                            baselineFor(seen.withdrawal().dispatches(), current.targets()),
                            current.reason(),
                            current.message())
                    : current;
            return unroute(
                    withdrawAgain(
                            hold(reference, hold.get().reason(), hold.get().message(), current.reads()), current, seen),
                    current,
                    seen);
        }
        String message = seen.withdrawal().routed()
                ? "no path gives the replica new work; reading its answering members"
                : "no EndpointSlice of the role lists the replica; reading its answering members' gauges and connections";
        if (!margin.isZero()) {
            Retirement draining = current.with(
                    RetirementState.Draining,
                    Reason.WITHDRAWN,
                    message,
                    seen.now(),
                    marked(current, Verdict.AWAITING_PROPAGATION, seen.now()));
            // no read starts within the margin, so none that counts can have been taken before it ended
            return new Step(draining, List.of(new Action.Announce(false, Reason.WITHDRAWN, message)));
        }
        Retirement draining = current.with(RetirementState.Draining, Reason.WITHDRAWN, message, seen.now(), Map.of());
        return new Step(
                draining,
                List.of(
                        new Action.Announce(false, Reason.WITHDRAWN, message),
                        new Action.ReadMembers(draining.answering())));
    }

    /** Every answering member's reads replaced by a mark: its run starts over, and the mark keeps when it was set. */
    private static Map<String, MemberReads> marked(Retirement current, Verdict mark, Instant at) {
        Map<String, MemberReads> reads = new HashMap<>();
        current.answering().forEach(name -> reads.put(name, new MemberReads(mark, 0, 0, at)));
        return reads;
    }

    /** What, if anything, still gives the target new work; one home for the first confirmation and every re-check. */
    private static Optional<Hold> withdrawalHold(Observation.Withdrawal w, Optional<Map<String, Double>> baseline) {
        if (!w.stillServing().isEmpty()) {
            return Optional.of(new Hold(
                    Reason.STILL_LABELLED_SERVING,
                    String.join(", ", new TreeSet<>(w.stillServing())) + " does not carry " + Labels.SERVING
                            + "=false"));
        }
        if (w.endpointsClear().isEmpty()) {
            return Optional.of(
                    new Hold(
                            Reason.ENDPOINTS_UNKNOWN,
                            "no EndpointSlice of the role's Service is known, so whether one lists a target member cannot be told"));
        }
        if (!w.endpointsClear().get()) {
            return Optional.of(
                    new Hold(Reason.ENDPOINTS_STILL_LIST, "an EndpointSlice of the role still lists a target member"));
        }
        if (!w.routed()) {
            // the Service is the only path: connections it carried before are the members' own tables' to show
            return Optional.empty();
        }
        if (w.routerSelects().isEmpty()) {
            return Optional.of(new Hold(
                    Reason.ROUTER_UNAVAILABLE,
                    "the router cannot say whether it still selects the replica"
                            + w.routerUnknownBecause().map(why -> ": " + why).orElse("")));
        }
        if (baseline.isEmpty()) {
            return Optional.of(new Hold(
                    Reason.ROUTER_UNAVAILABLE, "the router's dispatch counts were not read before the withdrawal"));
        }
        if (w.routerSelects().get()) {
            return Optional.of(new Hold(Reason.ROUTER_STILL_SELECTS, "the router still selects a target member"));
        }
        return lateDispatch(w.dispatches(), baseline.get())
                .map(member -> new Hold(
                        Reason.RECENT_DISPATCH,
                        "the router reported a dispatch to " + member + " since the withdrawal"));
    }

    /**
     * A count that differs from the one read before the withdrawal is a dispatch since. One below it means the router
     * restarted and counts from zero again, so only zero is still nothing; a count with no baseline started at zero.
     */
    private static Optional<String> lateDispatch(Map<String, Double> now, Map<String, Double> baseline) {
        return now.entrySet().stream()
                .filter(e -> e.getValue() > 0 && !e.getValue().equals(baseline.getOrDefault(e.getKey(), 0.0)))
                .map(Map.Entry::getKey)
                .sorted()
                .findFirst();
    }

    /** The machine owns the serving label for as long as the operation holds the replica: a member found serving is withdrawn again. */
    private static Step withdrawAgain(Step step, Retirement current, Observation seen) {
        List<Member> serving = current.targets().stream()
                .filter(m -> seen.withdrawal().stillServing().contains(m.name()))
                .toList();
        if (serving.isEmpty()) {
            return step;
        }
        List<Action> actions = new ArrayList<>(step.actions());
        actions.add(new Action.Withdraw(serving));
        return new Step(step.retirement(), List.copyOf(actions));
    }

    /**
     * Once every target carries serving=false, a router that still lists one, or cannot be asked, is asked on every
     * such pass to drop them: asking again is harmless, and one request lost (a router Pod down, the operator
     * restarted) is then made up on the next pass. Before the label is written the router is never asked, so that it
     * drops nothing the label does not already take away.
     */
    private static Step unroute(Step step, Retirement current, Observation seen) {
        Observation.Withdrawal w = seen.withdrawal();
        if (!w.routed() || !w.stillServing().isEmpty() || w.routerSelects().equals(Optional.of(false))) {
            return step;
        }
        List<Action> actions = new ArrayList<>(step.actions());
        actions.add(new Action.Unroute(current.targets()));
        return new Step(step.retirement(), List.copyOf(actions));
    }

    private static Step draining(Retirement current, Observation seen, Duration margin, Duration quietPeers) {
        boolean routed = seen.withdrawal().routed();
        boolean outOfTime = Budgets.exhausted(current.phaseStartedAt(), current.drainBudget(), seen.now());
        if (current.standingHold().isPresent()) {
            Classification.Held held = current.standingHold().get();
            return outOfTime
                    ? abort(current, seen.now(), held.reason(), held.message())
                    : hold(current, held.reason(), held.message(), current.reads());
        }
        Optional<Hold> lost = withdrawalHold(seen.withdrawal(), current.dispatchBaseline());
        if (lost.isPresent()) {
            // whatever was read while the replica could get new work proves nothing about it: the run starts over
            Map<String, MemberReads> runsStartedOver = new HashMap<>();
            current.reads()
                    .forEach((name, read) ->
                            runsStartedOver.put(name, new MemberReads(read.verdict(), read.inFlight(), 0, read.at())));
            if (!margin.isZero()) {
                // the margin counts again from when the withdrawal is next seen to hold
                runsStartedOver.putAll(marked(current, Verdict.WITHDRAWAL_LOST, seen.now()));
            }
            String message = "the withdrawal no longer holds: " + lost.get().message();
            if (outOfTime) {
                return abort(
                        current.holding(Reason.WITHDRAWAL_LOST, message, runsStartedOver),
                        seen.now(),
                        Reason.WITHDRAWAL_LOST,
                        "not proven idle within " + current.drainBudget().toSeconds() + " s: " + message);
            }
            Step held = unroute(
                    withdrawAgain(hold(current, Reason.WITHDRAWAL_LOST, message, runsStartedOver), current, seen),
                    current,
                    seen);
            if (!margin.isZero()) {
                return held;
            }
            List<Action> actions = new ArrayList<>(held.actions());
            actions.add(new Action.ReadMembers(current.answering()));
            return new Step(held.retirement(), List.copyOf(actions));
        }
        List<String> restarted = current.targets().stream()
                .filter(m -> restarted(m, seen))
                .map(Member::name)
                .toList();
        if (!restarted.isEmpty()) {
            return restartedMidDrain(current, seen, restarted, outOfTime);
        }
        Map<String, MemberReads> reads = new HashMap<>(current.reads());
        MemberJudgement.Pass pass = new MemberJudgement.Pass(
                seen.now(), routed, margin, quietPeers, new Hold(current.reason(), current.message()));
        boolean withinMargin = false;
        Optional<Hold> told = Optional.empty();
        List<String> discounted = new ArrayList<>();
        for (String name : current.answering()) {
            MemberJudgement judged = MemberJudgement.of(
                    name, reads.getOrDefault(name, MemberReads.NONE), MemberJudgement.Seen.of(name, seen), pass);
            judged.after().ifPresent(after -> reads.put(name, after));
            withinMargin |= judged.withinMargin();
            judged.discounted().ifPresent(discounted::add);
            told = judged.toldOver(told);
        }
        boolean proven = !current.answering().isEmpty()
                && current.answering().stream()
                        .allMatch(name ->
                                reads.getOrDefault(name, MemberReads.NONE).consecutiveIdle() >= Budgets.IDLE_READS)
                && told.isEmpty();
        if (proven) {
            String message = "every answering member read idle " + (routed ? "" : "with no client connected ")
                    + Budgets.IDLE_READS + " times in a row"
                    + (discounted.isEmpty() ? "" : " (" + String.join("; ", discounted) + ")")
                    + "; deleting the replica";
            Retirement deleting =
                    current.with(RetirementState.Deleting, Reason.PROVEN_IDLE, message, seen.now(), reads);
            return new Step(
                    deleting,
                    List.of(
                            new Action.Announce(false, Reason.PROVEN_IDLE, message),
                            new Action.Delete(current.targets())));
        }
        Hold holding = told.orElseThrow();
        if (outOfTime) {
            return abort(
                    current.holding(holding.reason(), holding.message(), reads),
                    seen.now(),
                    holding.reason(),
                    "not proven idle within " + current.drainBudget().toSeconds() + " s: " + holding.message());
        }
        Step held = hold(current, holding.reason(), holding.message(), reads);
        if (withinMargin) {
            return held;
        }
        List<Action> actions = new ArrayList<>(held.actions());
        actions.add(new Action.ReadMembers(current.answering()));
        return new Step(held.retirement(), List.copyOf(actions));
    }

    /**
     * A restart ended whatever the old process had in flight, and what was read of it says nothing about the new one.
     * Waiting out the budget would prove nothing either, so the reservation binds the new containers and the idle run
     * starts over on them (reads this pass may predate the restart and are dropped); the withdrawal still stands, so
     * the new process is proven idle like any other and the replica still leaves.
     */
    private static Step restartedMidDrain(
            Retirement current, Observation seen, List<String> restarted, boolean outOfTime) {
        String message = "the engine container of " + String.join(", ", restarted)
                + " restarted since the retirement began; proving the new process idle from the start";
        Map<String, MemberReads> startedOver = new HashMap<>();
        // the margin is about the paths to the replica, not its process: it runs on
        current.answering().forEach(name -> {
            MemberReads before = current.reads().getOrDefault(name, MemberReads.NONE);
            startedOver.put(
                    name,
                    before.verdict().marksMargin()
                            ? before
                            : new MemberReads(Verdict.CONTAINER_RESTARTED, 0, 0, seen.now()));
        });
        Retirement rebound = current.rebound(
                current.targets().stream().map(m -> rebound(m, seen)).toList());
        if (outOfTime) {
            return abort(
                    rebound.holding(Reason.CONTAINER_RESTARTED, message, startedOver),
                    seen.now(),
                    Reason.CONTAINER_RESTARTED,
                    "not proven idle within " + current.drainBudget().toSeconds() + " s: " + message);
        }
        Step held = hold(rebound, Reason.CONTAINER_RESTARTED, message, startedOver);
        if (startedOver.values().stream().anyMatch(r -> r.verdict().marksMargin())) {
            return held;
        }
        List<Action> actions = new ArrayList<>(held.actions());
        actions.add(new Action.ReadMembers(current.answering()));
        return new Step(held.retirement(), List.copyOf(actions));
    }

    private static Member rebound(Member reserved, Observation seen) {
        Observation.Present now = seen.members().get(reserved.name());
        return now == null ? reserved : new Member(reserved.name(), reserved.uid(), now.containerId());
    }

    /** Any reserved member, answering or not: a follower's restart changes the replica as much as the leader's. */
    private static boolean restarted(Member reserved, Observation seen) {
        Observation.Present now = seen.members().get(reserved.name());
        return now != null && !Objects.equals(reserved.containerId(), now.containerId());
    }

    /** The deletes went out, or were at least recorded as going out: wait for the members to be gone. */
    private static Step settle(Retirement current, Observation seen) {
        return new Step(
                current.with(
                        RetirementState.Settling,
                        Reason.PROVEN_IDLE,
                        "waiting for the members to be gone",
                        seen.now(),
                        current.reads()),
                deleteAgain(current, seen));
    }

    /**
     * A reserved member still there under its uid and not being deleted never got its delete: the API server refused
     * it, or the operator stopped between recording Deleting and sending it. Sending it again is harmless, since it
     * names the uid, and without it the replica would stay withdrawn for good.
     */
    private static List<Action> deleteAgain(Retirement current, Observation seen) {
        List<Member> undeleted = current.targets().stream()
                .filter(m -> {
                    Observation.Present now = seen.members().get(m.name());
                    return now != null && now.uid().equals(m.uid()) && !now.terminating();
                })
                .toList();
        return undeleted.isEmpty() ? List.of() : List.of(new Action.Delete(undeleted));
    }

    private static Step settling(Retirement current, Observation seen) {
        boolean gone = current.targets().stream().noneMatch(m -> {
            Observation.Present now = seen.members().get(m.name());
            return now != null && now.uid().equals(m.uid());
        });
        if (gone) {
            String message = "replica " + current.ordinal() + " of role " + current.role() + " retired";
            return new Step(
                    current.with(RetirementState.Completed, Reason.COMPLETED, message, seen.now(), current.reads()),
                    List.of(new Action.Announce(false, Reason.COMPLETED, message)));
        }
        List<Action> deletes = deleteAgain(current, seen);
        if (Budgets.exhausted(current.phaseStartedAt(), Budgets.SETTLING, seen.now())
                && current.reason() != Reason.MEMBERS_GONE_SLOWLY) {
            String message = "members still exist " + Budgets.SETTLING.toSeconds()
                    + " s after their deletion; they are draining through their hooks";
            List<Action> actions = new ArrayList<>(deletes);
            actions.add(new Action.Announce(true, Reason.MEMBERS_GONE_SLOWLY, message));
            return new Step(
                    current.holding(Reason.MEMBERS_GONE_SLOWLY, message, current.reads()), List.copyOf(actions));
        }
        return new Step(current, deletes);
    }

    private static Step hold(Retirement current, Reason reason, String message, Map<String, MemberReads> reads) {
        Retirement held = current.holding(reason, message, reads);
        List<Action> actions = reason.equals(current.reason())
                ? List.of()
                : List.of(new Action.Announce(!reason.waits(), reason, message));
        return new Step(held, actions);
    }

    /**
     * The spec no longer asks for the target to go (it was scaled back up, say): give it back its traffic. Past the
     * deletion there is nothing to give back, and the operation runs to its end.
     */
    public Step cancel(Retirement current, Instant now) {
        if (current.state().ended() || current.state().pastDeletion()) {
            return new Step(current, List.of());
        }
        return abort(
                current,
                now,
                Reason.NO_LONGER_WANTED,
                "the spec no longer asks for replica " + current.ordinal() + " of role " + current.role()
                        + " to go; it is kept and serves again");
    }

    /**
     * Aborted records when it ended in its phase start, so that the cool-down before a retry counts from there. A move
     * off a node going away is not kept back but handed to the drain instead, unless the node is no longer going away.
     */
    private static Step abort(Retirement current, Instant now, Reason reason, String message) {
        if (NextRetirement.NODE_MAINTENANCE.equals(current.cause()) && reason != Reason.NO_LONGER_WANTED) {
            return handBack(current, now, message);
        }
        Retirement aborted = current.with(RetirementState.Aborted, reason, message, now, current.reads());
        return new Step(
                aborted,
                List.of(
                        new Action.Restore(current.targets()),
                        new Action.Announce(true, reason, "retirement aborted: " + message)));
    }

    /**
     * The replica leaves as the drain would have taken it: deleted with its grace, its drain hook holding each member
     * while it still carries requests, so that node maintenance waits no longer than the drain budget and the grace.
     */
    private static Step handBack(Retirement current, Instant now, String why) {
        String message = "replica " + current.ordinal() + " of role " + current.role()
                + " could not be moved off its node through the" + " protocol (" + why
                + "); deleting it with its grace, as the node's drain would have, so the drain is not held longer";
        Retirement deleting = current.with(RetirementState.Deleting, Reason.HANDED_BACK, message, now, current.reads());
        return new Step(
                deleting,
                List.of(new Action.Announce(true, Reason.HANDED_BACK, message), new Action.Delete(current.targets())));
    }
}
