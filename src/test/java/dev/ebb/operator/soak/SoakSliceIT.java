package dev.ebb.operator.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every build runs a slice of the chaos soak: the whole fleet, 90 s of seeded chaos, convergence and the last
 * streams after it, every invariant checked. It runs in a JVM of its own (its own surefire execution), since it sets
 * up logging, a mock API server and an operator of its own. A violation fails the build; the run's output (in the
 * surefire report) prints the schedule and the command that replays it.
 */
class SoakSliceIT {
    /** Fixed, so that every build draws the same schedule of actions. */
    static final long SEED = 101L;

    static final Duration CHAOS = Duration.ofSeconds(90);

    @BeforeAll
    static void logging() {
        ErrorLog.chooseBackEnd();
    }

    @Test
    void ninetySecondsOfSeededChaosBreakNoInvariant() throws Exception {
        Soak.Result result = Soak.run(SEED, CHAOS, Soak.fleet(Integer.MAX_VALUE).size(), System.out);

        assertThat(result.violations())
                .as("violations of seed %d (replay: make soak SEED=%d MINUTES=1.5)", SEED, SEED)
                .isEmpty();
    }
}
