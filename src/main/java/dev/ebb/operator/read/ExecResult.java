package dev.ebb.operator.read;

import java.time.Duration;

/** How one exec into a Pod ended. Never an exception: every way it can go wrong is a value here. */
public sealed interface ExecResult {
    /** The command ran to its end. */
    record Exited(int code, byte[] stdout) implements ExecResult {}

    /** The command printed more than the cap; reading stopped there and the stream was closed. */
    record Overflowed(int capBytes) implements ExecResult {}

    /** No exit within the deadline; the stream was closed. */
    record TimedOut(Duration deadline) implements ExecResult {}

    /** The command could not be run at all: no such Pod or container, refused, or the connection broke. */
    record Failed(String why) implements ExecResult {}
}
