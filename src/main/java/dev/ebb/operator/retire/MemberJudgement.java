package dev.ebb.operator.retire;

import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.retire.MemberReads.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One answering member's part in a draining pass, judged from its reads so far and what the pass saw of it alone. The
 * draining step folds these over the answering members, in order. Pure.
 *
 * @param after the member's reads after this pass; empty when the pass brought nothing new of it
 * @param hold how the member holds the replica, while its run is short or the margin runs
 * @param fresh whether the hold comes from this pass (a read, or the margin): such a hold is told over a hold that
 *     only awaits reads; one that only keeps the last verdict standing is told only when no member before it holds
 * @param withinMargin whether the member's reads wait out the margin since the withdrawal was seen to hold
 * @param discounted peers that did not hold this read, and why, for the message that deletes the replica
 */
record MemberJudgement(
        Optional<MemberReads> after,
        Optional<Hold> hold,
        boolean fresh,
        boolean withinMargin,
        Optional<String> discounted) {
    /** Peers named in a hold's message at most; the count covers them all. */
    private static final int PEERS_NAMED = 5;

    /**
     * What a draining pass holds for every member alike.
     *
     * @param margin how long after the withdrawal was seen to hold a read still proves nothing
     * @param quietPeers without a router, how long no request must reach a member before peers connected to it are
     *     taken for bystanders
     * @param standing the retirement's hold before this pass: the last verdict, which stands while a read is under way
     */
    record Pass(Instant now, boolean routed, Duration margin, Duration quietPeers, Hold standing) {}

    /**
     * What a pass saw of one member: its gauges, and without a router its connection table and the sum of its request
     * counters read with them. Each is empty when it was not read in this pass.
     */
    record Seen(Optional<Reading> reading, Optional<ConnectionRead.Peers> peers, Optional<Double> requests) {
        static Seen of(String name, Observation seen) {
            return new Seen(
                    Optional.ofNullable(seen.reads().get(name)),
                    Optional.ofNullable(seen.connections().get(name)),
                    Optional.ofNullable(seen.requests().get(name)));
        }
    }

    /** A member's read in this pass, and the hold it makes while its run is short. */
    private record Judged(MemberReads after, Reason reason, String message, Optional<String> discounted) {
        Judged(MemberReads after, Reason reason, String message) {
            this(after, reason, message, Optional.empty());
        }
    }

    static MemberJudgement of(String name, MemberReads before, Seen seen, Pass pass) {
        Optional<MemberReads> propagating = propagating(before, pass.now(), pass.margin());
        if (propagating.isPresent()) {
            Instant since = propagating.get().at();
            Instant until = since.plus(pass.margin());
            String message = pass.routed()
                    ? "the router was seen to send the replica nothing more at " + since + "; until " + until
                            + " a request it sent before may still be in " + name
                            + "'s front end, where no gauge counts it"
                    : "the endpoints were seen clear at " + since + "; until " + until
                            + " a node may still send a new connection to " + name;
            return new MemberJudgement(
                    propagating, Optional.of(new Hold(Reason.AWAITING_READS, message)), true, true, Optional.empty());
        }
        if (seen.reading().isEmpty()) {
            if (before.consecutiveIdle() >= Budgets.IDLE_READS) {
                return new MemberJudgement(Optional.empty(), Optional.empty(), false, false, Optional.empty());
            }
            // a read still under way tells nothing new: the last verdict stands, so the reason does not flip between it
            // and "awaiting" (and announce each flip) from one pass to the next
            boolean readBefore =
                    !MemberReads.NONE.equals(before) && !before.verdict().marksMargin();
            Hold hold = readBefore ? pass.standing() : new Hold(Reason.AWAITING_READS, "waiting for reads of " + name);
            return new MemberJudgement(Optional.empty(), Optional.of(hold), false, false, Optional.empty());
        }
        Reading reading = seen.reading().get();
        Judged judged = pass.routed()
                ? judged(name, before, reading, pass.now())
                : judgedWithConnections(
                        name, before, reading, seen.peers(), seen.requests(), pass.quietPeers(), pass.now());
        Optional<Hold> hold = judged.after().consecutiveIdle() < Budgets.IDLE_READS
                ? Optional.of(new Hold(judged.reason(), judged.message()))
                : Optional.empty();
        return new MemberJudgement(Optional.of(judged.after()), hold, true, false, judged.discounted());
    }

    /** The hold the pass tells once this member is judged, given the one told for the members before it. */
    Optional<Hold> toldOver(Optional<Hold> before) {
        if (hold.isEmpty() || before.isEmpty()) {
            return hold.isEmpty() ? before : hold;
        }
        return fresh && before.get().reason() == Reason.AWAITING_READS ? hold : before;
    }

    /**
     * The mark a member's reads keep while the withdrawal settles, or empty once reads count. A withdrawal lost and now
     * seen back starts the margin at this pass; a mark without a time (an edited record) starts it again too.
     */
    private static Optional<MemberReads> propagating(MemberReads before, Instant now, Duration margin) {
        if (before.verdict() == Verdict.WITHDRAWAL_LOST
                || (before.verdict() == Verdict.AWAITING_PROPAGATION && before.at() == null)) {
            return Optional.of(new MemberReads(Verdict.AWAITING_PROPAGATION, 0, 0, now));
        }
        if (before.verdict() == Verdict.AWAITING_PROPAGATION
                && now.isBefore(before.at().plus(margin))) {
            return Optional.of(before);
        }
        return Optional.empty();
    }

    private static Judged judged(String name, MemberReads before, Reading reading, Instant at) {
        MemberReads after = next(before, reading, at);
        return new Judged(after, reasonOf(reading), messageOf(name, reading, after));
    }

    /**
     * Without a router idle gauges count only with no client connected: a client holding a keep-alive connection can
     * send its next request on it whatever the endpoints say. A table that cannot be read proves nothing either way.
     * Peers that stay connected while no request reaches the member for {@code quietPeers} (its gauges idle and its
     * request counters still at every read) are bystanders, a scraper or a probe, and no longer hold it: a client's
     * request on such a connection moves the counters and starts the wait over, or, once the replica is deleted, meets
     * the drain hook, which holds the engine while the request runs.
     */
    private static Judged judgedWithConnections(
            String name,
            MemberReads before,
            Reading reading,
            Optional<ConnectionRead.Peers> table,
            Optional<Double> requests,
            Duration quietPeers,
            Instant at) {
        if (!(reading instanceof Reading.Idle)) {
            return judged(name, before, reading, at);
        }
        if (table.isEmpty()) {
            return judged(name, before, new Reading.Failed("its connection table was not read with its gauges"), at);
        }
        ConnectionRead.Peers peers = table.get();
        if (peers instanceof ConnectionRead.Peers.Unknown unknown) {
            return judged(name, before, new Reading.Failed(unknown.why()), at);
        }
        Optional<MemberReads.Quiet> quiet = requests.map(
                total -> before.quiet().filter(q -> q.requests() == total).orElse(new MemberReads.Quiet(total, at)));
        ConnectionRead.Peers.Connected connected = (ConnectionRead.Peers.Connected) peers;
        if (connected.count() == 0) {
            Judged idle = judged(name, before, reading, at);
            return new Judged(idle.after().withQuiet(quiet), idle.reason(), idle.message());
        }
        List<String> named = connected
                .listed()
                .subList(0, Math.min(PEERS_NAMED, connected.listed().size()));
        String peersNamed = String.join(", ", named) + (connected.count() > named.size() ? ", …" : "");
        if (quiet.isPresent() && !at.isBefore(quiet.get().since().plus(quietPeers))) {
            Judged idle = judged(name, before, reading, at);
            String why = connected.count() + (connected.count() == 1 ? " peer" : " peers") + " still connected to "
                    + name + " ("
                    + peersNamed + ") taken for bystanders: no request reached it in "
                    + Duration.between(quiet.get().since(), at).toSeconds()
                    + " s";
            return new Judged(
                    idle.after().withQuiet(quiet), idle.reason(), idle.message() + "; " + why, Optional.of(why));
        }
        String message = name + " is idle but " + connected.count()
                + (connected.count() == 1 ? " client is" : " clients are")
                + " still connected: " + peersNamed
                + quiet.map(q -> "; no request has reached it for "
                                + Duration.between(q.since(), at).toSeconds() + " of the " + quietPeers.toSeconds()
                                + " s after which they are taken for bystanders")
                        .orElse("; its request counters could not be read, so they cannot be told from bystanders");
        return new Judged(new MemberReads(Verdict.OPEN_CONNECTIONS, 0, 0, at, quiet), Reason.OPEN_CONNECTIONS, message);
    }

    private static MemberReads next(MemberReads before, Reading reading, Instant at) {
        if (reading instanceof Reading.Idle) {
            if (before.consecutiveIdle() > 0 && before.at() == null) {
                // a run whose last read has no time cannot be spaced from: it starts over
                return new MemberReads(Verdict.IDLE, 0, 1, at);
            }
            if (before.consecutiveIdle() > 0 && at.isBefore(before.at().plus(Budgets.READ_SPACING))) {
                return before;
            }
            return new MemberReads(Verdict.IDLE, 0, before.consecutiveIdle() + 1, at);
        }
        return new MemberReads(Verdict.of(reading), reading instanceof Reading.Busy busy ? busy.inFlight() : 0, 0, at);
    }

    private static Reason reasonOf(Reading reading) {
        if (reading instanceof Reading.Idle) {
            return Reason.AWAITING_READS;
        }
        if (reading instanceof Reading.Busy) {
            return Reason.BUSY;
        }
        return reading instanceof Reading.Partial ? Reason.PARTIAL_ENVELOPE : Reason.READ_FAILED;
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
}
