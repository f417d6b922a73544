package dev.ebb.operator.read;

import java.time.Duration;

/**
 * Bounds on one exec into a Pod: how much it may print and how long the whole exchange, connection included,
 * may take.
 */
public record ExecLimits(int maxStdoutBytes, Duration deadline) {
    /** A member read: the engine's answer is capped at 1 MiB, the whole read at 5 s. */
    public static final ExecLimits MEMBER_READ = new ExecLimits(1024 * 1024, Duration.ofSeconds(5));
    /** A connection read: 64 peers of at most 53 bytes each and the count fit well within 8 KiB; the same 5 s. */
    public static final ExecLimits CONNECTION_READ = new ExecLimits(8 * 1024, Duration.ofSeconds(5));
}
