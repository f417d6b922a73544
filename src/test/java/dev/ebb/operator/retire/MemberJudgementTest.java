package dev.ebb.operator.retire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.retire.MemberReads.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class MemberJudgementTest {
    private static final String MEMBER = RetirementMachineTest.LEADER.name();
    private static final Duration QUIET_PEERS = Duration.ofSeconds(10);
    /** What the retirement said before the pass: it stands while a read is under way. */
    private static final Hold STANDING = new Hold(Reason.BUSY, MEMBER + " has 2 requests in flight");

    private static final ConnectionRead.Peers NO_PEERS = new ConnectionRead.Peers.Connected(0, List.of());
    private static final ConnectionRead.Peers CLIENT = new ConnectionRead.Peers.Connected(1, List.of("10.0.0.9:51234"));

    static Instant at(double seconds) {
        return RetirementMachineTest.at(seconds);
    }

    static MemberReads idle(int run, Double seconds) {
        return new MemberReads(Verdict.IDLE, 0, run, seconds == null ? null : at(seconds));
    }

    static MemberReads marked(Verdict verdict, Double seconds) {
        return new MemberReads(verdict, 0, 0, seconds == null ? null : at(seconds));
    }

    /**
     * One member in one pass, by named fields, and what its judgement must be. A row starts as a member never read,
     * seen with a router at 10 s with no margin and nothing read of it, and expects nothing new and no hold; each
     * wither says what differs.
     */
    record Case(
            String title,
            MemberReads before,
            Optional<Reading> reading,
            Optional<ConnectionRead.Peers> peers,
            Optional<Double> requests,
            boolean routed,
            Duration margin,
            Optional<MemberReads> after,
            Optional<Reason> holds,
            String said,
            boolean fresh,
            boolean withinMargin,
            Optional<String> discounted) {
        static Case member(String title) {
            return new Case(
                    title,
                    MemberReads.NONE,
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty(),
                    true,
                    Duration.ZERO,
                    Optional.empty(),
                    Optional.empty(),
                    "",
                    false,
                    false,
                    Optional.empty());
        }

        Case before(MemberReads reads) {
            return new Case(
                    title,
                    reads,
                    reading,
                    peers,
                    requests,
                    routed,
                    margin,
                    after,
                    holds,
                    said,
                    fresh,
                    withinMargin,
                    discounted);
        }

        Case reads(Reading gauges) {
            return new Case(
                    title,
                    before,
                    Optional.of(gauges),
                    peers,
                    requests,
                    routed,
                    margin,
                    after,
                    holds,
                    said,
                    fresh,
                    withinMargin,
                    discounted);
        }

        /** Without a router, with this connection table and these request counters read with the gauges. */
        Case unrouted(ConnectionRead.Peers table, Double counters) {
            return new Case(
                    title,
                    before,
                    reading,
                    Optional.ofNullable(table),
                    Optional.ofNullable(counters),
                    false,
                    margin,
                    after,
                    holds,
                    said,
                    fresh,
                    withinMargin,
                    discounted);
        }

        Case margin(int seconds) {
            return new Case(
                    title,
                    before,
                    reading,
                    peers,
                    requests,
                    routed,
                    Duration.ofSeconds(seconds),
                    after,
                    holds,
                    said,
                    fresh,
                    withinMargin,
                    discounted);
        }

        /** Its reads after the pass. */
        Case gives(MemberReads reads) {
            return new Case(
                    title,
                    before,
                    reading,
                    peers,
                    requests,
                    routed,
                    margin,
                    Optional.of(reads),
                    holds,
                    said,
                    fresh,
                    withinMargin,
                    discounted);
        }

        /** It holds the replica for this reason, with a message that says this; a hold from this pass is fresh. */
        Case holds(Reason reason, String message, boolean fromThisPass) {
            return new Case(
                    title,
                    before,
                    reading,
                    peers,
                    requests,
                    routed,
                    margin,
                    after,
                    Optional.of(reason),
                    message,
                    fromThisPass,
                    withinMargin,
                    discounted);
        }

        /** A read of this pass that holds nothing: a fresh judgement without a hold. */
        Case holdsNothing() {
            return new Case(
                    title,
                    before,
                    reading,
                    peers,
                    requests,
                    routed,
                    margin,
                    after,
                    Optional.empty(),
                    "",
                    true,
                    withinMargin,
                    discounted);
        }

        /** Its reads wait out the margin since the withdrawal was seen to hold. */
        Case waitsOutMargin() {
            return new Case(
                    title,
                    before,
                    reading,
                    peers,
                    requests,
                    routed,
                    margin,
                    after,
                    holds,
                    said,
                    fresh,
                    true,
                    discounted);
        }

        Case discounting(String why) {
            return new Case(
                    title,
                    before,
                    reading,
                    peers,
                    requests,
                    routed,
                    margin,
                    after,
                    holds,
                    said,
                    fresh,
                    withinMargin,
                    Optional.of(why));
        }

        MemberJudgement judged() {
            return MemberJudgement.of(
                    MEMBER,
                    before,
                    new MemberJudgement.Seen(reading, peers, requests),
                    new MemberJudgement.Pass(at(10), routed, margin, QUIET_PEERS, STANDING));
        }

        @Override
        public String toString() {
            return title;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                Case.member("a first idle read counts one and awaits the next")
                        .reads(new Reading.Idle())
                        .gives(idle(1, 10.0))
                        .holds(Reason.AWAITING_READS, MEMBER + " read idle 1 of 2 times in a row", true),
                Case.member("an idle read a second after the last proves the member")
                        .before(idle(1, 9.0))
                        .reads(new Reading.Idle())
                        .gives(idle(2, 10.0))
                        .holdsNothing(),
                Case.member("an idle read less than a second after the last counts once")
                        .before(idle(1, 9.5))
                        .reads(new Reading.Idle())
                        .gives(idle(1, 9.5))
                        .holds(Reason.AWAITING_READS, "read idle 1 of 2", true),
                Case.member("a run whose last read has no time starts over")
                        .before(idle(1, null))
                        .reads(new Reading.Idle())
                        .gives(idle(1, 10.0))
                        .holds(Reason.AWAITING_READS, "read idle 1 of 2", true),
                Case.member("a busy read ends the run")
                        .before(idle(1, 9.0))
                        .reads(new Reading.Busy(3))
                        .gives(new MemberReads(Verdict.BUSY, 3, 0, at(10)))
                        .holds(Reason.BUSY, MEMBER + " has 3 requests in flight", true),
                Case.member("a page without every gauge ends the run")
                        .before(idle(1, 9.0))
                        .reads(new Reading.Partial(List.of("vllm:num_requests_waiting")))
                        .gives(new MemberReads(Verdict.PARTIAL, 0, 0, at(10)))
                        .holds(Reason.PARTIAL_ENVELOPE, "answered without vllm:num_requests_waiting", true),
                Case.member("a failed read ends the run")
                        .before(idle(1, 9.0))
                        .reads(new Reading.Failed("the engine refused the connection"))
                        .gives(new MemberReads(Verdict.FAILED, 0, 0, at(10)))
                        .holds(Reason.READ_FAILED, "could not be read: the engine refused the connection", true),
                Case.member("no read landed of a member never read: it awaits one")
                        .holds(Reason.AWAITING_READS, "waiting for reads of " + MEMBER, false),
                Case.member("no read landed of a member read before: the last verdict stands")
                        .before(new MemberReads(Verdict.BUSY, 2, 0, at(9)))
                        .holds(STANDING.reason(), STANDING.message(), false),
                Case.member("no read landed since a restart: the hold it made stands")
                        .before(marked(Verdict.CONTAINER_RESTARTED, 9.0))
                        .holds(STANDING.reason(), STANDING.message(), false),
                Case.member("no read landed of a member already proven: it holds nothing")
                        .before(idle(2, 9.0)),
                Case.member("with a router, within the margin nothing counts")
                        .before(marked(Verdict.AWAITING_PROPAGATION, 7.0))
                        .margin(5)
                        .reads(new Reading.Idle())
                        .gives(marked(Verdict.AWAITING_PROPAGATION, 7.0))
                        .holds(Reason.AWAITING_READS, "until " + at(12) + " a request it sent before", true)
                        .waitsOutMargin(),
                Case.member("without a router, within the margin nothing counts")
                        .before(marked(Verdict.AWAITING_PROPAGATION, 7.0))
                        .margin(5)
                        .unrouted(NO_PEERS, 40.0)
                        .reads(new Reading.Idle())
                        .gives(marked(Verdict.AWAITING_PROPAGATION, 7.0))
                        .holds(Reason.AWAITING_READS, "until " + at(12) + " a node may still send", true)
                        .waitsOutMargin(),
                Case.member("a read once the margin is over counts")
                        .before(marked(Verdict.AWAITING_PROPAGATION, 5.0))
                        .margin(5)
                        .reads(new Reading.Idle())
                        .gives(idle(1, 10.0))
                        .holds(Reason.AWAITING_READS, "read idle 1 of 2", true),
                Case.member("a withdrawal lost and seen back starts the margin at this pass")
                        .before(marked(Verdict.WITHDRAWAL_LOST, 3.0))
                        .margin(5)
                        .reads(new Reading.Idle())
                        .gives(marked(Verdict.AWAITING_PROPAGATION, 10.0))
                        .holds(Reason.AWAITING_READS, "nothing more at " + at(10), true)
                        .waitsOutMargin(),
                Case.member("a margin mark without a time starts the margin again")
                        .before(marked(Verdict.AWAITING_PROPAGATION, null))
                        .margin(5)
                        .gives(marked(Verdict.AWAITING_PROPAGATION, 10.0))
                        .holds(Reason.AWAITING_READS, "until " + at(15), true)
                        .waitsOutMargin(),
                Case.member("without a router, idle with no client starts the quiet spell")
                        .unrouted(NO_PEERS, 40.0)
                        .reads(new Reading.Idle())
                        .gives(idle(1, 10.0).withQuiet(Optional.of(new MemberReads.Quiet(40.0, at(10)))))
                        .holds(Reason.AWAITING_READS, "read idle 1 of 2", true),
                Case.member("without a router, a client still connected holds")
                        .before(idle(1, 9.0))
                        .unrouted(CLIENT, 40.0)
                        .reads(new Reading.Idle())
                        .gives(new MemberReads(
                                Verdict.OPEN_CONNECTIONS,
                                0,
                                0,
                                at(10),
                                Optional.of(new MemberReads.Quiet(40.0, at(10)))))
                        .holds(Reason.OPEN_CONNECTIONS, "1 client is still connected: 10.0.0.9:51234", true),
                Case.member("without a router, a client on a member quiet for the whole wait is a bystander")
                        .before(idle(1, 9.0).withQuiet(Optional.of(new MemberReads.Quiet(40.0, at(0)))))
                        .unrouted(CLIENT, 40.0)
                        .reads(new Reading.Idle())
                        .gives(idle(2, 10.0).withQuiet(Optional.of(new MemberReads.Quiet(40.0, at(0)))))
                        .holdsNothing()
                        .discounting("1 peer still connected to " + MEMBER
                                + " (10.0.0.9:51234) taken for bystanders: no request reached it in 10 s"),
                Case.member("without a router, idle gauges without their connection table prove nothing")
                        .before(idle(1, 9.0))
                        .unrouted(null, 40.0)
                        .reads(new Reading.Idle())
                        .gives(new MemberReads(Verdict.FAILED, 0, 0, at(10)))
                        .holds(Reason.READ_FAILED, "its connection table was not read with its gauges", true),
                Case.member("without a router, a table that cannot be read proves nothing")
                        .unrouted(new ConnectionRead.Peers.Unknown("exit 7"), 40.0)
                        .reads(new Reading.Idle())
                        .gives(new MemberReads(Verdict.FAILED, 0, 0, at(10)))
                        .holds(Reason.READ_FAILED, "could not be read: exit 7", true),
                Case.member("without a router, busy gauges hold whatever the table says")
                        .unrouted(new ConnectionRead.Peers.Unknown("exit 7"), 40.0)
                        .reads(new Reading.Busy(1))
                        .gives(new MemberReads(Verdict.BUSY, 1, 0, at(10)))
                        .holds(Reason.BUSY, "has 1 requests in flight", true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void eachMemberIsJudgedFromItsOwnReadsAndWhatThePassSawOfIt(Case c) {
        MemberJudgement judged = c.judged();

        assertThat(judged.after()).as("reads after").isEqualTo(c.after());
        assertThat(judged.hold().map(Hold::reason)).as("hold").isEqualTo(c.holds());
        judged.hold().ifPresent(h -> assertThat(h.message()).contains(c.said()));
        assertThat(judged.fresh()).as("fresh").isEqualTo(c.fresh());
        assertThat(judged.withinMargin()).as("within the margin").isEqualTo(c.withinMargin());
        assertThat(judged.discounted()).as("discounted").isEqualTo(c.discounted());
    }

    private static final Hold AWAITING = new Hold(Reason.AWAITING_READS, "waiting for reads of m0");
    private static final Hold BUSY = new Hold(Reason.BUSY, "m1 has 1 requests in flight");
    private static final Hold FAILED = new Hold(Reason.READ_FAILED, "m1 could not be read: cut");

    /** What the members before said, this member's judgement, and the hold the pass tells after it. */
    record Told(String title, Optional<Hold> earlier, Optional<Hold> hold, boolean fresh, Optional<Hold> told) {
        static Told after(String title, Hold earlier) {
            return new Told(title, Optional.ofNullable(earlier), Optional.empty(), false, Optional.empty());
        }

        Told member(Hold own, boolean fromThisPass) {
            return new Told(title, earlier, Optional.ofNullable(own), fromThisPass, told);
        }

        Told tells(Hold hold) {
            return new Told(title, earlier, this.hold, fresh, Optional.ofNullable(hold));
        }

        @Override
        public String toString() {
            return title;
        }
    }

    static Stream<Told> precedence() {
        return Stream.of(
                Told.after("nothing held, nothing holds", null)
                        .member(null, true)
                        .tells(null),
                Told.after("nothing held: a standing verdict is told", null)
                        .member(BUSY, false)
                        .tells(BUSY),
                Told.after("nothing held: a fresh hold is told", null)
                        .member(BUSY, true)
                        .tells(BUSY),
                Told.after("a member holding nothing changes nothing", BUSY)
                        .member(null, true)
                        .tells(BUSY),
                Told.after("a fresh hold is told over a wait for reads", AWAITING)
                        .member(BUSY, true)
                        .tells(BUSY),
                Told.after("a standing verdict is not told over a wait for reads", AWAITING)
                        .member(BUSY, false)
                        .tells(AWAITING),
                Told.after("a fresh wait replaces a wait", AWAITING)
                        .member(new Hold(Reason.AWAITING_READS, "m1 read idle 1 of 2 times in a row"), true)
                        .tells(new Hold(Reason.AWAITING_READS, "m1 read idle 1 of 2 times in a row")),
                Told.after("the first member's hold other than a wait is kept", BUSY)
                        .member(FAILED, true)
                        .tells(BUSY));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("precedence")
    void thePassTellsTheFirstHoldThatIsMoreThanAWaitForReads(Told t) {
        MemberJudgement judged = new MemberJudgement(Optional.empty(), t.hold(), t.fresh(), false, Optional.empty());

        assertThat(judged.toldOver(t.earlier())).isEqualTo(t.told());
    }
}
