package dev.ebb.operator.soak;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sim.LoadGenerator;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which cut generations an outside disruption explains, by the numbers of each. */
class CutJudgeTest {
    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    private static final String POD = "qwen-server-r1-m0";

    /** A generation of {@code length} s started at {@code start} s, cut at {@code cut} s. */
    private static Sent cut(boolean routed, String pod, int start, int length, int cut) {
        return new Sent(
                "qwen",
                routed,
                new LoadGenerator.Request(
                        1, pod, T0.plusSeconds(start), T0.plusSeconds(cut), LoadGenerator.Outcome.CUT, "stream ended"),
                Duration.ofSeconds(length));
    }

    private static Disruption deletion(String pod, int at, int grace) {
        return new Disruption(Disruption.Kind.DELETE_POD, pod, T0.plusSeconds(at), Duration.ofSeconds(grace));
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        "needed past the window of a 30 s deletion",
                        cut(true, POD, 10, 60, 40),
                        List.of(deletion(POD, 10, 30)),
                        true),
                Arguments.of(
                        "a short grace cuts one that would have fitted the Pod's own",
                        cut(true, POD, 0, 20, 8),
                        List.of(deletion(POD, 3, 5)),
                        true),
                Arguments.of(
                        "cut inside the window it had",
                        cut(true, POD, 10, 15, 20),
                        List.of(deletion(POD, 12, 30)),
                        false),
                Arguments.of(
                        "started on the Pod while it terminated and needed past the window",
                        cut(false, POD, 20, 40, 40),
                        List.of(deletion(POD, 10, 30)),
                        true),
                Arguments.of(
                        "another Pod's deletion explains nothing",
                        cut(true, POD, 10, 60, 40),
                        List.of(deletion("qwen-server-r0-m0", 10, 30)),
                        false),
                Arguments.of(
                        "a deletion long after the cut explains nothing",
                        cut(true, POD, 0, 60, 10),
                        List.of(deletion(POD, 30, 30)),
                        false),
                Arguments.of(
                        "a deletion that ended before the request began explains nothing",
                        cut(true, POD, 100, 60, 110),
                        List.of(deletion(POD, 10, 30)),
                        false),
                Arguments.of(
                        "its follower deleted: the collective's window is the follower's",
                        cut(true, POD, 10, 60, 40),
                        List.of(deletion("qwen-server-r1-m1", 10, 30)),
                        true),
                Arguments.of(
                        "its follower deleted, cut inside the follower's window",
                        cut(true, POD, 10, 15, 20),
                        List.of(deletion("qwen-server-r1-m1", 12, 30)),
                        false),
                Arguments.of(
                        "a member of another replica explains nothing",
                        cut(true, POD, 10, 60, 25),
                        List.of(new Disruption(
                                Disruption.Kind.CONTAINER_RESTART,
                                "qwen-server-r11-m1",
                                T0.plusSeconds(25),
                                Duration.ZERO)),
                        false),
                Arguments.of(
                        "its follower's container restarted while it ran",
                        cut(true, POD, 10, 60, 25),
                        List.of(new Disruption(
                                Disruption.Kind.CONTAINER_RESTART,
                                "qwen-server-r1-m1",
                                T0.plusSeconds(25),
                                Duration.ZERO)),
                        true),
                Arguments.of(
                        "a container restart while it ran",
                        cut(true, POD, 10, 60, 25),
                        List.of(new Disruption(
                                Disruption.Kind.CONTAINER_RESTART, POD, T0.plusSeconds(25), Duration.ZERO)),
                        true),
                Arguments.of(
                        "a router restart long before the cut explains nothing",
                        cut(true, POD, 31, 60, 77),
                        List.of(new Disruption(
                                Disruption.Kind.ROUTER_RESTART, "qwen", T0.plusSeconds(30), Duration.ZERO)),
                        false),
                Arguments.of(
                        "its router restarted while it ran",
                        cut(true, POD, 10, 60, 25),
                        List.of(new Disruption(
                                Disruption.Kind.ROUTER_RESTART, "qwen", T0.plusSeconds(25), Duration.ZERO)),
                        true),
                Arguments.of(
                        "a router restart explains nothing for a client of the Service",
                        cut(false, POD, 10, 60, 25),
                        List.of(new Disruption(
                                Disruption.Kind.ROUTER_RESTART, "qwen", T0.plusSeconds(25), Duration.ZERO)),
                        false),
                Arguments.of("nothing happened to it", cut(true, POD, 10, 60, 25), List.of(), false),
                Arguments.of("no Pod named", cut(true, null, 10, 60, 25), List.of(deletion(POD, 10, 30)), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void explainsACutOnlyByTheNumbers(String name, Sent cut, List<Disruption> disruptions, boolean explained) {
        CutJudge.Verdict verdict = CutJudge.judge(cut, disruptions, T0);

        assertThat(verdict.explained()).as(verdict.why()).isEqualTo(explained);
        assertThat(verdict.why())
                .as("the request's own numbers are printed")
                .contains(
                        "started " + CutJudge.at(cut.request().start(), T0), "length " + CutJudge.seconds(cut.length()))
                .satisfiesAnyOf(
                        why -> assertThat(why).contains("window ended"),
                        why -> assertThat(why).contains("RESTART"),
                        why -> assertThat(why).contains("no outside"),
                        why -> assertThat(why).contains("no Pod named"));
    }
}
