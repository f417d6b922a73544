package dev.ebb.operator.retire;

import dev.ebb.operator.read.Reading;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The retirement protocol as a pure function: (state, observation) → (next state, actions). It deletes a replica
 * only after the replica left every path to new work and each answering member read idle twice in a row on a
 * complete envelope, with no restart in between; anything it cannot prove holds the replica, within budgets.
 */
public final class RetirementMachine {
    private RetirementMachine() {
    }

    /** The next state and what to do about it. */
    public record Step(Retirement retirement, List<Action> actions) {
    }

    public static Step begin(String role, int ordinal, String cause, List<Member> targets, Classification classification, Instant now) {
        if (classification instanceof Classification.Refused refused) {
            Retirement aborted = new Retirement(role, ordinal, cause, List.copyOf(targets), List.of(), Optional.empty(),
                    RetirementState.Aborted, refused.reason(), refused.message(), now, now, Map.of());
            return new Step(aborted, List.of(new Action.Announce(true, refused.reason(), refused.message())));
        }
        List<String> answering = classification instanceof Classification.Answerable a ? List.copyOf(a.answering()) : List.of();
        Optional<Classification.Held> held = classification instanceof Classification.Held h ? Optional.of(h) : Optional.empty();
        String message = "retiring replica " + ordinal + " of role " + role + " (" + cause + "): withdrawing it from new work";
        Retirement started = new Retirement(role, ordinal, cause, List.copyOf(targets), answering, held,
                RetirementState.Withdrawing, Reasons.STARTED, message, now, now, Map.of());
        return new Step(started, List.of(new Action.Withdraw(started.targets()), new Action.Announce(false, Reasons.STARTED, message)));
    }

    public static Step step(Retirement current, Observation seen) {
        if (current.state().ended()) {
            return new Step(current, List.of());
        }
        if (!current.state().pastDeletion()) {
            Optional<Step> aborted = abortIfLost(current, seen);
            if (aborted.isPresent()) {
                return aborted.get();
            }
        }
        return switch (current.state()) {
            case Withdrawing -> withdrawing(current, seen);
            case Draining -> draining(current, seen);
            case Deleting -> settle(current, seen.now());
            case Settling -> settling(current, seen);
            default -> new Step(current, List.of());
        };
    }

    /** A member gone or replaced before the deletion, or the whole budget spent: keep what is left. */
    private static Optional<Step> abortIfLost(Retirement current, Observation seen) {
        for (Member member : current.targets()) {
            Observation.Present now = seen.members().get(member.name());
            if (now == null || !now.uid().equals(member.uid()) || now.terminating()) {
                return Optional.of(abort(current, seen.now(), Reasons.TERMINATED_OUTSIDE,
                        "member " + member.name() + " was terminated outside the operator; the rest of the replica is kept"));
            }
        }
        if (Budgets.exhausted(current.startedAt(), Budgets.WHOLE, seen.now())) {
            return Optional.of(abort(current, seen.now(), Reasons.BUDGET_EXHAUSTED,
                    "the operation ran out of its " + Budgets.WHOLE.toSeconds() + " s while " + current.reason() + ": " + current.message()));
        }
        return Optional.empty();
    }

    private static Step withdrawing(Retirement current, Observation seen) {
        Optional<String[]> hold = withdrawalHold(seen.withdrawal());
        if (hold.isPresent()) {
            if (Budgets.exhausted(current.phaseStartedAt(), Budgets.WITHDRAWING, seen.now())) {
                return abort(current, seen.now(), hold.get()[0], "withdrawal not confirmed within " + Budgets.WITHDRAWING.toSeconds() + " s: " + hold.get()[1]);
            }
            return hold(current, hold.get()[0], hold.get()[1], current.reads());
        }
        String message = "no path gives the replica new work; reading its answering members";
        Retirement draining = current.with(RetirementState.Draining, Reasons.WITHDRAWN, message, seen.now(), Map.of());
        return new Step(draining, List.of(new Action.Announce(false, Reasons.WITHDRAWN, message), new Action.ReadMembers(draining.answering())));
    }

    private static Optional<String[]> withdrawalHold(Observation.Withdrawal w) {
        if (!w.routed()) {
            return Optional.of(new String[] {Reasons.DIRECT_SERVICE_CONNECTIONS,
                    "without a router, connections made through the role's Service cannot be observed"});
        }
        if (!w.endpointsClear()) {
            return Optional.of(new String[] {Reasons.ENDPOINTS_STILL_LIST, "an EndpointSlice of the role still lists a target member"});
        }
        if (w.routerSelects().isEmpty()) {
            return Optional.of(new String[] {Reasons.ROUTER_UNAVAILABLE, "the router cannot say whether it still selects the replica"});
        }
        if (w.routerSelects().get()) {
            return Optional.of(new String[] {Reasons.ROUTER_STILL_SELECTS, "the router still selects a target member"});
        }
        if (w.dispatchedSinceWithdrawal()) {
            return Optional.of(new String[] {Reasons.RECENT_DISPATCH, "the router reported a dispatch to a target member since the withdrawal"});
        }
        return Optional.empty();
    }

    private static Step draining(Retirement current, Observation seen) {
        boolean outOfTime = Budgets.exhausted(current.phaseStartedAt(), Budgets.DRAINING, seen.now());
        if (current.standingHold().isPresent()) {
            Classification.Held held = current.standingHold().get();
            return outOfTime ? abort(current, seen.now(), held.reason(), held.message()) : hold(current, held.reason(), held.message(), current.reads());
        }
        Map<String, MemberReads> reads = new HashMap<>(current.reads());
        String holdReason = null;
        String holdMessage = null;
        for (String name : current.answering()) {
            MemberReads before = reads.getOrDefault(name, MemberReads.NONE);
            Reading reading = seen.reads().get(name);
            if (restarted(current, seen, name)) {
                reads.put(name, new MemberReads("ContainerRestarted", 0, 0, seen.now()));
                holdReason = Reasons.CONTAINER_RESTARTED;
                holdMessage = "the engine container of " + name + " restarted since the retirement began; its gauges describe a new process";
                continue;
            }
            if (reading == null) {
                if (before.consecutiveIdle() < Budgets.IDLE_READS && holdReason == null) {
                    // a read still under way tells nothing new: the last verdict stands, so the reason does not flip
                    // between it and "awaiting" (and announce each flip) from one pass to the next
                    boolean readBefore = !MemberReads.NONE.equals(before);
                    holdReason = readBefore ? current.reason() : Reasons.AWAITING_READS;
                    holdMessage = readBefore ? current.message() : "waiting for reads of " + name;
                }
                continue;
            }
            MemberReads after = next(before, reading, seen.now());
            reads.put(name, after);
            if (after.consecutiveIdle() < Budgets.IDLE_READS && (holdReason == null || Reasons.AWAITING_READS.equals(holdReason))) {
                holdReason = reasonOf(reading);
                holdMessage = messageOf(name, reading, after);
            }
        }
        boolean proven = !current.answering().isEmpty() && current.answering().stream()
                .allMatch(name -> reads.getOrDefault(name, MemberReads.NONE).consecutiveIdle() >= Budgets.IDLE_READS)
                && holdReason == null;
        if (proven) {
            String message = "every answering member read idle " + Budgets.IDLE_READS + " times in a row; deleting the replica";
            Retirement deleting = current.with(RetirementState.Deleting, Reasons.PROVEN_IDLE, message, seen.now(), reads);
            return new Step(deleting, List.of(new Action.Announce(false, Reasons.PROVEN_IDLE, message), new Action.Delete(current.targets())));
        }
        if (outOfTime) {
            return abort(current.holding(holdReason, holdMessage, reads), seen.now(), holdReason,
                    "not proven idle within " + Budgets.DRAINING.toSeconds() + " s: " + holdMessage);
        }
        Step held = hold(current, holdReason, holdMessage, reads);
        List<Action> actions = new ArrayList<>(held.actions());
        actions.add(new Action.ReadMembers(current.answering()));
        return new Step(held.retirement(), List.copyOf(actions));
    }

    private static boolean restarted(Retirement current, Observation seen, String name) {
        Member reserved = current.targets().stream().filter(m -> m.name().equals(name)).findFirst().orElse(null);
        Observation.Present now = seen.members().get(name);
        return reserved != null && now != null && !Objects.equals(reserved.containerId(), now.containerId());
    }

    private static MemberReads next(MemberReads before, Reading reading, Instant at) {
        if (reading instanceof Reading.Idle) {
            return new MemberReads("Idle", 0, before.consecutiveIdle() + 1, at);
        }
        if (reading instanceof Reading.Busy busy) {
            return new MemberReads("Busy", busy.inFlight(), 0, at);
        }
        if (reading instanceof Reading.Partial) {
            return new MemberReads("Partial", 0, 0, at);
        }
        return new MemberReads("Failed", 0, 0, at);
    }

    private static String reasonOf(Reading reading) {
        if (reading instanceof Reading.Idle) {
            return Reasons.AWAITING_READS;
        }
        if (reading instanceof Reading.Busy) {
            return Reasons.BUSY;
        }
        return reading instanceof Reading.Partial ? Reasons.PARTIAL_ENVELOPE : Reasons.READ_FAILED;
    }

    private static String messageOf(String name, Reading reading, MemberReads after) {
        if (reading instanceof Reading.Idle) {
            return name + " read idle " + after.consecutiveIdle() + " of " + Budgets.IDLE_READS + " times in a row";
        }
        if (reading instanceof Reading.Busy busy) {
            return name + " has " + (long) busy.inFlight() + " requests in flight";
        }
        if (reading instanceof Reading.Partial partial) {
            return name + " answered without " + String.join(", ", partial.missing());
        }
        return name + " could not be read: " + ((Reading.Failed) reading).why();
    }

    /** The deletes went out: wait for the members to be gone. */
    private static Step settle(Retirement current, Instant now) {
        return new Step(current.with(RetirementState.Settling, Reasons.PROVEN_IDLE, "waiting for the members to be gone", now,
                current.reads()), List.of());
    }

    private static Step settling(Retirement current, Observation seen) {
        boolean gone = current.targets().stream().noneMatch(m -> {
            Observation.Present now = seen.members().get(m.name());
            return now != null && now.uid().equals(m.uid());
        });
        if (gone) {
            String message = "replica " + current.ordinal() + " of role " + current.role() + " retired";
            return new Step(current.with(RetirementState.Completed, Reasons.COMPLETED, message, seen.now(), current.reads()),
                    List.of(new Action.Announce(false, Reasons.COMPLETED, message)));
        }
        if (Budgets.exhausted(current.phaseStartedAt(), Budgets.SETTLING, seen.now()) && !Reasons.MEMBERS_GONE_SLOWLY.equals(current.reason())) {
            String message = "members still exist " + Budgets.SETTLING.toSeconds() + " s after their deletion; they are draining through their hooks";
            return new Step(current.holding(Reasons.MEMBERS_GONE_SLOWLY, message, current.reads()),
                    List.of(new Action.Announce(true, Reasons.MEMBERS_GONE_SLOWLY, message)));
        }
        return new Step(current, List.of());
    }

    private static Step hold(Retirement current, String reason, String message, Map<String, MemberReads> reads) {
        Retirement held = current.holding(reason, message, reads);
        List<Action> actions = reason.equals(current.reason()) ? List.of() : List.of(new Action.Announce(true, reason, message));
        return new Step(held, actions);
    }

    /**
     * The spec no longer asks for the target to go (it was scaled back up, say): give it back its traffic. Past the
     * deletion there is nothing to give back, and the operation runs to its end.
     */
    public static Step cancel(Retirement current, Instant now) {
        if (current.state().ended() || current.state().pastDeletion()) {
            return new Step(current, List.of());
        }
        return abort(current, now, Reasons.NO_LONGER_WANTED, "the spec no longer asks for replica " + current.ordinal()
                + " of role " + current.role() + " to go; it is kept and serves again");
    }

    /** Aborted records when it ended in its phase start, so that the cool-down before a retry counts from there. */
    private static Step abort(Retirement current, Instant now, String reason, String message) {
        Retirement aborted = current.with(RetirementState.Aborted, reason, message, now, current.reads());
        return new Step(aborted, List.of(new Action.Restore(current.targets()), new Action.Announce(true, reason, "retirement aborted: " + message)));
    }
}
