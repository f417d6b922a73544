package dev.ebb.operator.soak;

import java.time.Instant;

/** One broken invariant, when it was seen and what showed it. */
public record Violation(Instant at, String invariant, String what) {}
