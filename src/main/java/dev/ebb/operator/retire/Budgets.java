package dev.ebb.operator.retire;

import java.time.Duration;
import java.time.Instant;

/** How long each phase of a retirement may take; reaching a budget exactly counts as exhausted. */
public final class Budgets {
    public static final Duration WITHDRAWING = Duration.ofSeconds(30);
    /** The draining budget of a role that sets none (spec.roles[].retirement.drainSeconds). */
    public static final Duration DRAINING = Duration.ofSeconds(240);

    public static final Duration SETTLING = Duration.ofSeconds(30);
    /** What the whole operation allows beyond its withdrawal and draining budgets before it must reach the deletion. */
    private static final Duration SLACK = Duration.ofSeconds(30);
    /** The whole operation up to the deletion, at the default draining budget. */
    public static final Duration WHOLE = whole(DRAINING);
    /** Consecutive idle reads on complete envelopes that prove a member idle. */
    public static final int IDLE_READS = 2;
    /** Idle reads closer together than this count as one: two reads of the same instant prove nothing about time passing. */
    public static final Duration READ_SPACING = Duration.ofSeconds(1);

    private Budgets() {}

    /** The whole operation up to the deletion, for a replica given {@code draining} to be proven idle. */
    public static Duration whole(Duration draining) {
        return WITHDRAWING.plus(draining).plus(SLACK);
    }

    static boolean exhausted(Instant since, Duration budget, Instant now) {
        return !now.isBefore(since.plus(budget));
    }
}
