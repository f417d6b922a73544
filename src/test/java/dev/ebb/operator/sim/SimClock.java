package dev.ebb.operator.sim;

import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** The operator's clock in the test world: real time, which a test can move forward to reach a budget in seconds. */
@Singleton
public class SimClock extends Clock {
    private final AtomicReference<Duration> ahead = new AtomicReference<>(Duration.ZERO);

    public void advance(Duration by) {
        ahead.updateAndGet(d -> d.plus(by));
    }

    public void reset() {
        ahead.set(Duration.ZERO);
    }

    @Override
    public Instant instant() {
        return Instant.now().plus(ahead.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the operator works in UTC");
    }
}
