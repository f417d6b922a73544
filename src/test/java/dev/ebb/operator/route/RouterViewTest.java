package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What a router's replicas say together. */
class RouterViewTest {
    private static final RouterView DROPPED = new RouterView(Optional.of(false), false);
    private static final RouterView SELECTS = new RouterView(Optional.of(true), false);
    private static final RouterView DISPATCHED = new RouterView(Optional.of(false), true);
    private static final RouterView UNKNOWN = RouterView.unavailable();

    static Stream<Arguments> replicas() {
        return Stream.of(
                Arguments.of("one replica that dropped the target", List.of(DROPPED), DROPPED),
                Arguments.of("every replica dropped it", List.of(DROPPED, DROPPED, DROPPED), DROPPED),
                Arguments.of("one of several still selects it", List.of(DROPPED, SELECTS, DROPPED), SELECTS),
                Arguments.of("one of several dispatched to it since", List.of(DROPPED, DISPATCHED), DISPATCHED),
                Arguments.of("one selects, another dispatched", List.of(SELECTS, DISPATCHED), new RouterView(Optional.of(true), true)),
                Arguments.of("one cannot tell beside those that dropped it", List.of(DROPPED, UNKNOWN, DROPPED), UNKNOWN),
                Arguments.of("one cannot tell beside one that selects", List.of(SELECTS, UNKNOWN), UNKNOWN),
                Arguments.of("no replica at all", List.of(), UNKNOWN));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("replicas")
    void oneReplicaThatHoldsTheTargetOrCannotTellSpeaksForTheRouter(String why, List<RouterView> replicas, RouterView router) {
        assertThat(RouterView.allOf(replicas)).isEqualTo(router);
    }
}
