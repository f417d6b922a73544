package dev.ebb.operator.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class LeaseStandingTest {
    private static final String ME = "ebb-operator-7d9f";
    private static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");
    /** The SDK's defaults: a 15 s Lease renewed within a 10 s deadline leaves 5 s. */
    private static final Duration SPARE = Duration.ofSeconds(5);

    private static final Duration LEASE = Duration.ofSeconds(15);

    record Case(String name, Optional<LeaseStanding.Lease> lease, boolean held, String why) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static Optional<LeaseStanding.Lease> lease(String holder, Duration renewedAgo, Duration duration) {
        return Optional.of(new LeaseStanding.Lease(
                Optional.ofNullable(holder), Optional.of(NOW.minus(renewedAgo)), Optional.ofNullable(duration)));
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("renewed 2 s ago: 13 s left", lease(ME, Duration.ofSeconds(2), LEASE), true, ""),
                new Case(
                        "renewed 10 s ago: exactly the spare left", lease(ME, Duration.ofSeconds(10), LEASE), true, ""),
                new Case(
                        "renewed 10.001 s ago: less than the spare",
                        lease(ME, Duration.ofMillis(10_001), LEASE),
                        false,
                        "the Lease lapses in 4999 ms, within the 5000 ms kept spare for an action"),
                new Case(
                        "paused 20 s: already lapsed",
                        lease(ME, Duration.ofSeconds(20), LEASE),
                        false,
                        "the Lease lapses in -5000 ms, within the 5000 ms kept spare for an action"),
                new Case(
                        "another took it over",
                        lease("ebb-operator-5c2a", Duration.ofSeconds(1), LEASE),
                        false,
                        "ebb-operator-5c2a holds the Lease"),
                new Case(
                        "handed back (empty holder)",
                        lease("", Duration.ofSeconds(1), LEASE),
                        false,
                        "nobody holds the Lease"),
                new Case(
                        "no holder at all", lease(null, Duration.ofSeconds(1), LEASE), false, "nobody holds the Lease"),
                new Case("deleted", Optional.empty(), false, "the Lease does not exist"),
                new Case(
                        "no duration",
                        lease(ME, Duration.ofSeconds(1), null),
                        false,
                        "the Lease does not say how long it holds"),
                new Case(
                        "negative duration",
                        lease(ME, Duration.ofSeconds(1), Duration.ofSeconds(-15)),
                        false,
                        "the Lease does not say how long it holds"),
                new Case(
                        "never renewed",
                        Optional.of(new LeaseStanding.Lease(Optional.of(ME), Optional.empty(), Optional.of(LEASE))),
                        false,
                        "the Lease does not say how long it holds"),
                new Case(
                        "renewed in the future (a clock ahead): held",
                        lease(ME, Duration.ofSeconds(-3), LEASE),
                        true,
                        ""));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void anActionGoesOnOnlyWhileTheLeaseIsThisOperatorsForLongerThanTheSpare(Case c) {
        LeaseStanding standing = LeaseStanding.judge(c.lease(), ME, NOW, SPARE);

        if (c.held()) {
            assertThat(standing).isInstanceOf(LeaseStanding.Held.class);
        } else {
            assertThat(standing).isEqualTo(new LeaseStanding.Lost(c.why()));
        }
    }
}
