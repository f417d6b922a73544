package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.sandbox.Floor.InFlight;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FloorTest {
    private static final List<String> FOUR = List.of("r0", "r1", "r2", "r3");

    static Stream<Arguments> choices() {
        return Stream.of(
                Arguments.of(
                        "the two replicas whose longest generation is shortest go",
                        List.of(
                                new InFlight("r0", 90),
                                new InFlight("r0", 10),
                                new InFlight("r1", 40),
                                new InFlight("r2", 25),
                                new InFlight("r3", 70)),
                        2,
                        40 + 6.0),
                Arguments.of(
                        "an idle replica leaves first, and the next shortest decides",
                        List.of(new InFlight("r0", 90), new InFlight("r1", 40), new InFlight("r2", 25)),
                        2,
                        25 + 6.0),
                Arguments.of(
                        "two idle replicas cost only the hook",
                        List.of(new InFlight("r0", 90), new InFlight("r1", 40)),
                        2,
                        6.0),
                Arguments.of(
                        "one leaving: the shortest longest",
                        List.of(
                                new InFlight("r0", 30),
                                new InFlight("r1", 20),
                                new InFlight("r2", 50),
                                new InFlight("r3", 80)),
                        1,
                        20 + 6.0),
                Arguments.of("nothing leaving costs nothing", List.of(new InFlight("r0", 30)), 0, 0.0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("choices")
    void theFloorIsTheBestChoicesLongestGenerationPlusTheHook(
            String title, List<InFlight> inFlight, int leaving, double floor) {
        assertThat(Floor.seconds(inFlight, FOUR, leaving, 6)).isEqualTo(floor);
    }
}
