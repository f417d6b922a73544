package dev.ebb.operator.retire;

import java.time.Duration;
import java.time.Instant;

/**
 * A retirement made from another by named fields, for fixtures: {@code from(r).ordinal(1).state(Aborted).get()} keeps
 * every field it does not name.
 */
final class RetirementFrom {
    private final Retirement r;
    private int ordinal;
    private String cause;
    private RetirementState state;
    private Reason reason;
    private String message;
    private Instant phaseStartedAt;
    private Duration drainBudget;

    private RetirementFrom(Retirement r) {
        this.r = r;
        this.ordinal = r.ordinal();
        this.cause = r.cause();
        this.state = r.state();
        this.reason = r.reason();
        this.message = r.message();
        this.phaseStartedAt = r.phaseStartedAt();
        this.drainBudget = r.drainBudget();
    }

    static RetirementFrom from(Retirement r) {
        return new RetirementFrom(r);
    }

    RetirementFrom ordinal(int value) {
        ordinal = value;
        return this;
    }

    RetirementFrom cause(String value) {
        cause = value;
        return this;
    }

    /** In this state since {@code since}, for this reason, as this message says. */
    RetirementFrom state(RetirementState value, Instant since, Reason why, String saying) {
        state = value;
        phaseStartedAt = since;
        reason = why;
        message = saying;
        return this;
    }

    RetirementFrom drainBudget(Duration value) {
        drainBudget = value;
        return this;
    }

    Retirement get() {
        return new Retirement(
                r.role(),
                ordinal,
                cause,
                r.targets(),
                r.answering(),
                r.standingHold(),
                state,
                reason,
                message,
                r.startedAt(),
                phaseStartedAt,
                r.reads(),
                r.dispatchBaseline(),
                drainBudget);
    }
}
