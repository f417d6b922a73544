package dev.ebb.operator.read;

import dev.ebb.operator.drain.InFlightGauges;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/** Turns how a member read's exec ended into a reading. Pure. */
public final class ReadOutcome {
    private ReadOutcome() {}

    public static Reading interpret(ExecResult result, List<InFlightGauges.Gauge> gauges) {
        if (result instanceof ExecResult.Exited exited) {
            return switch (exited.code()) {
                case 0 -> PrometheusText.read(new String(exited.stdout(), StandardCharsets.UTF_8), gauges);
                case 2 -> new Reading.Failed("the engine refused the connection");
                case 3 -> new Reading.Failed("the engine answered an HTTP error");
                case 4 -> new Reading.Failed("the TLS handshake with the engine failed");
                case 5 -> new Reading.Failed("the engine did not answer within " + ReadCommand.TIMEOUT_SECONDS + " s");
                case 6 -> new Reading.Failed("the engine's metrics page is over the size cap");
                default -> new Reading.Failed("the read script exited with code " + exited.code());
            };
        }
        if (result instanceof ExecResult.Overflowed overflowed) {
            return new Reading.Failed("the read printed more than " + overflowed.capBytes() + " bytes");
        }
        if (result instanceof ExecResult.TimedOut timedOut) {
            return new Reading.Failed(
                    "the read took longer than " + timedOut.deadline().toSeconds() + " s");
        }
        return new Reading.Failed("exec failed: " + ((ExecResult.Failed) result).why());
    }

    /** The sum of the request counters on the page the read printed; empty unless it printed a page holding them all. */
    public static Optional<Double> requests(ExecResult result, List<String> counters) {
        return result instanceof ExecResult.Exited exited && exited.code() == 0
                ? PrometheusText.total(new String(exited.stdout(), StandardCharsets.UTF_8), counters)
                : Optional.empty();
    }
}
