package dev.ebb.operator.lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Whether this operator may still act as the leader, judged from the Lease as the API server holds it. A standby takes
 * over once the holder's last renewal is a lease duration old; an action that may take traffic or a replica away is
 * therefore done only while that moment is more than {@code spare} away, so a pause between the check and the action
 * shorter than the spare cannot overlap a new leader's work.
 */
public sealed interface LeaseStanding {
    /** The Lease names this operator and runs on for at least the spare. */
    record Held(Duration left) implements LeaseStanding {}

    /** The Lease is another's, free, or about to lapse: this operator no longer acts. */
    record Lost(String why) implements LeaseStanding {}

    /**
     * The Lease as read: who holds it, when the holder last renewed it and for how long a renewal holds.
     *
     * @param holder empty when nobody holds it (released)
     */
    record Lease(Optional<String> holder, Optional<Instant> renewedAt, Optional<Duration> duration) {}

    static LeaseStanding judge(Optional<Lease> lease, String identity, Instant now, Duration spare) {
        if (lease.isEmpty()) {
            return new Lost("the Lease does not exist");
        }
        Lease read = lease.get();
        Optional<String> holder = read.holder().filter(h -> !h.isBlank());
        if (holder.isEmpty()) {
            return new Lost("nobody holds the Lease");
        }
        if (!holder.get().equals(identity)) {
            return new Lost(holder.get() + " holds the Lease");
        }
        if (read.renewedAt().isEmpty()
                || read.duration().isEmpty()
                || read.duration().get().isNegative()) {
            return new Lost("the Lease does not say how long it holds");
        }
        Duration left = Duration.between(
                now, read.renewedAt().get().plus(read.duration().get()));
        if (left.compareTo(spare) < 0) {
            return new Lost("the Lease lapses in " + left.toMillis() + " ms, within the " + spare.toMillis()
                    + " ms kept spare for an action");
        }
        return new Held(left);
    }
}
