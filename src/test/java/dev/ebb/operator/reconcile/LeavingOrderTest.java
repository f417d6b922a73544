package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.read.Reading;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LeavingOrderTest {
    private static LeavingOrder.Candidate read(int ordinal, Reading reading) {
        return new LeavingOrder.Candidate(ordinal, true, true, Optional.of(reading));
    }

    private static LeavingOrder.Candidate busy(int ordinal, double inFlight) {
        return read(ordinal, new Reading.Busy(inFlight));
    }

    private static LeavingOrder.Candidate idle(int ordinal) {
        return read(ordinal, new Reading.Idle());
    }

    private static LeavingOrder.Candidate unread(int ordinal) {
        return new LeavingOrder.Candidate(ordinal, true, true, Optional.empty());
    }

    private static LeavingOrder.Candidate neverRan(int ordinal) {
        return new LeavingOrder.Candidate(ordinal, false, true, Optional.empty());
    }

    private static LeavingOrder.Candidate outdated(int ordinal) {
        return new LeavingOrder.Candidate(ordinal, true, false, Optional.empty());
    }

    static Stream<Arguments> table() {
        Reading failed = new Reading.Failed("the engine refused the connection");
        Reading partial = new Reading.Partial(List.of("vllm:num_requests_running"));
        return Stream.of(
                Arguments.of(
                        "the fewest in flight leave, not the highest ordinal",
                        List.of(busy(0, 5), busy(1, 2), idle(3), read(2, failed)),
                        1,
                        List.of(3),
                        List.of()),
                Arguments.of(
                        "ties go to the highest ordinal",
                        List.of(busy(0, 2), busy(1, 2), busy(2, 7)),
                        1,
                        List.of(1),
                        List.of()),
                Arguments.of(
                        "a replica that could not be read goes after every readable one",
                        List.of(read(2, failed), busy(0, 9), busy(1, 4)),
                        2,
                        List.of(1, 0),
                        List.of()),
                Arguments.of(
                        "an unreadable replica still goes once nothing readable is left",
                        List.of(read(2, failed), busy(0, 9), read(1, failed)),
                        2,
                        List.of(0, 2),
                        List.of()),
                Arguments.of(
                        "a partial envelope counts as unreadable, whatever its other gauges say",
                        List.of(read(2, partial), busy(1, 3), busy(0, 4)),
                        1,
                        List.of(1),
                        List.of()),
                Arguments.of(
                        "unreadable ones among themselves: highest ordinal first",
                        List.of(read(0, failed), read(1, partial), busy(2, 1)),
                        2,
                        List.of(2, 1),
                        List.of()),
                Arguments.of(
                        "never-ran replicas go first and directly",
                        List.of(idle(0), neverRan(1), busy(2, 3)),
                        1,
                        List.of(1),
                        List.of()),
                Arguments.of(
                        "then outdated ones, before any at the current configuration",
                        List.of(idle(0), outdated(1), busy(2, 3), outdated(3)),
                        2,
                        List.of(3, 1),
                        List.of()),
                Arguments.of(
                        "never-ran and outdated ones do not wait for reads",
                        List.of(unread(0), outdated(1), neverRan(2), unread(3)),
                        2,
                        List.of(2, 1),
                        List.of()),
                Arguments.of(
                        "while any current candidate is unread, none of them is chosen",
                        List.of(unread(0), idle(1), busy(2, 1), outdated(3)),
                        2,
                        List.of(3),
                        List.of(0)),
                Arguments.of(
                        "when every current replica leaves, no read is awaited",
                        List.of(unread(0), unread(1)),
                        2,
                        List.of(1, 0),
                        List.of()),
                Arguments.of(
                        "an impossible count is unreadable, not the idlest",
                        List.of(busy(0, Double.NaN), busy(1, -4), busy(2, Double.POSITIVE_INFINITY), busy(3, 1)),
                        1,
                        List.of(3),
                        List.of()),
                Arguments.of("nothing to take away", List.of(idle(0), busy(1, 1)), 0, List.of(), List.of()),
                Arguments.of("no candidates at all", List.of(), 1, List.of(), List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void ranks(
            String row,
            List<LeavingOrder.Candidate> candidates,
            int count,
            List<Integer> leaving,
            List<Integer> awaiting) {
        LeavingOrder.Order order = LeavingOrder.choose(candidates, count, true);

        assertThat(order.leaving()).extracting(LeavingOrder.Choice::ordinal).containsExactlyElementsOf(leaving);
        assertThat(order.awaiting()).containsExactlyElementsOf(awaiting);
    }

    static Stream<Arguments> sentences() {
        return Stream.of(
                Arguments.of(
                        List.of(busy(0, 5), busy(1, 2), idle(3), read(2, new Reading.Failed("x"))),
                        1,
                        "in flight 0, lowest of 4 read: r3 0, r1 2, r0 5, r2 unreadable"),
                Arguments.of(
                        List.of(busy(0, 5), busy(1, 2.5), busy(2, 9)),
                        2,
                        "in flight 5, rank 2 of 3 read, lowest first: r1 2.500, r0 5, r2 9"),
                Arguments.of(
                        List.of(read(0, new Reading.Partial(List.of("g"))), read(1, new Reading.Failed("x"))),
                        1,
                        "unreadable, chosen only after every readable replica (2 read): r1 unreadable, r0 unreadable"),
                Arguments.of(
                        List.of(idle(0), neverRan(1)),
                        1,
                        "never ran: none of its containers started, so it holds no work"),
                Arguments.of(
                        List.of(idle(0), outdated(1)),
                        1,
                        "at an outdated configuration, which goes before the current one"));
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("sentences")
    void theLastChosenSaysWhyWithTheReadingsBehindIt(
            List<LeavingOrder.Candidate> candidates, int count, String because) {
        List<LeavingOrder.Choice> leaving =
                LeavingOrder.choose(candidates, count, true).leaving();

        assertThat(leaving.get(leaving.size() - 1).because()).isEqualTo(because);
    }

    @Test
    void theSentenceStaysShortForTheLargestRole() {
        List<LeavingOrder.Candidate> candidates =
                IntStream.range(0, 1024).mapToObj(o -> busy(o, 1e300 + o)).toList();

        LeavingOrder.Choice chosen =
                LeavingOrder.choose(candidates, 1, true).leaving().get(0);

        assertThat(chosen.because())
                .hasSizeLessThanOrEqualTo(RetirementStatus.MAX_CHOSEN_BECAUSE)
                .contains("and 1018 more");
    }

    static Stream<Arguments> combined() {
        return Stream.of(
                Arguments.of(
                        List.of(new Reading.Idle(), new Reading.Busy(2), new Reading.Busy(1)), new Reading.Busy(3)),
                Arguments.of(List.of(new Reading.Idle(), new Reading.Idle()), new Reading.Idle()),
                Arguments.of(
                        List.of(new Reading.Busy(2), new Reading.Partial(List.of("g"))),
                        new Reading.Partial(List.of("g"))),
                Arguments.of(List.of(new Reading.Failed("gone"), new Reading.Idle()), new Reading.Failed("gone")),
                Arguments.of(List.of(), new Reading.Failed("no member answers for the replica")));
    }

    @ParameterizedTest
    @MethodSource("combined")
    void answeringMembersSumAndOneUnreadableMemberMakesTheReplicaUnreadable(List<Reading> members, Reading replica) {
        assertThat(LeavingOrder.combined(members)).isEqualTo(replica);
    }
}
