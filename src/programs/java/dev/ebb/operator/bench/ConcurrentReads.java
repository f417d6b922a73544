package dev.ebb.operator.bench;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.sim.LocalExec;
import io.fabric8.kubernetes.api.model.Pod;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Two hundred member reads at once, as a retirement pass over a large deployment would start them: each through
 * the test world's exec (the real read script, one python3 per read) against its own fake engine.
 */
public final class ConcurrentReads {
    private static final int MEMBERS = 200;
    private static final int ROUNDS = 5;
    /** Far beyond any read's own bound: reaching it means a read never ended, which the reader promises cannot happen. */
    private static final Duration ROUND_GIVE_UP = Duration.ofMinutes(2);

    private static final Duration OVERRUN = Duration.ofSeconds(1);

    /**
     * @param readMillis every counted read's own duration, subscription to reading
     * @param roundMillis per round, the first read's subscription to the last read's reading
     * @param verdicts how many readings of each kind over every counted read, a failure's under its reason
     * @param atBound reads that took the whole bound, whatever they then established
     * @param overBound reads that ended more than a second after the bound, which the reader means to hold
     */
    public record Figures(
            int members,
            int rounds,
            List<Double> readMillis,
            List<Double> roundMillis,
            Map<String, Integer> verdicts,
            int atBound,
            int overBound) {
        public void print() {
            System.out.printf(
                    Locale.ROOT,
                    "%d member reads at once through the local exec (real read script, python3 per read), "
                            + "%d rounds after one uncounted warm-up, bound %d ms%n",
                    members,
                    rounds,
                    ExecLimits.MEMBER_READ.deadline().toMillis());
            Columns.header();
            Columns.row("each read, subscribe to reading (ms)", readMillis);
            Columns.row("all " + members + " done, per round (ms)", roundMillis);
            verdicts.forEach((verdict, count) -> Columns.line(verdict, Integer.toString(count)));
            Columns.line("reads that took the whole bound", Integer.toString(atBound));
            Columns.line("of them, ended over " + OVERRUN.toMillis() + " ms past it", Integer.toString(overBound));
            System.out.println();
        }
    }

    private record TimedReading(Reading reading, double millis) {}

    private ConcurrentReads() {}

    public static void main(String[] args) throws Exception {
        Benchmarks.runAndExit(() -> measure().print());
    }

    public static Figures measure() throws Exception {
        try (FakeMembers members = new FakeMembers(MEMBERS);
                LocalExec exec = new LocalExec()) {
            MemberReader reader = new MemberReader(exec, new SimpleMeterRegistry());
            // the first round pays for class loading and a cold python3; it is not what a running operator sees
            round(reader, members.pods());
            List<Double> readMillis = new ArrayList<>();
            List<Double> roundMillis = new ArrayList<>();
            Map<String, Integer> verdicts = new TreeMap<>();
            int atBound = 0;
            int overBound = 0;
            for (int i = 0; i < ROUNDS; i++) {
                long start = System.nanoTime();
                List<TimedReading> readings = round(reader, members.pods());
                roundMillis.add(millisSince(start));
                for (TimedReading timed : readings) {
                    readMillis.add(timed.millis());
                    verdicts.merge(verdictOf(timed.reading()), 1, Integer::sum);
                    if (timed.millis() >= ExecLimits.MEMBER_READ.deadline().toMillis()) {
                        atBound++;
                    }
                    if (timed.millis()
                            > ExecLimits.MEMBER_READ.deadline().plus(OVERRUN).toMillis()) {
                        overBound++;
                    }
                }
            }
            return new Figures(MEMBERS, ROUNDS, readMillis, roundMillis, verdicts, atBound, overBound);
        }
    }

    /** Every member's read subscribed at once; each one timed from its own subscription, so queueing counts. */
    private static List<TimedReading> round(MemberReader reader, List<Pod> members) {
        List<Uni<TimedReading>> reads = members.stream()
                .map(member -> Uni.createFrom().deferred(() -> {
                    long start = System.nanoTime();
                    return reader.read(member, Engine.VLLM)
                            .map(reading -> new TimedReading(reading, millisSince(start)));
                }))
                .toList();
        return Uni.join().all(reads).andFailFast().await().atMost(ROUND_GIVE_UP);
    }

    private static String verdictOf(Reading reading) {
        return reading instanceof Reading.Failed failed
                ? "Failed: " + failed.why()
                : reading.getClass().getSimpleName();
    }

    private static double millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e6;
    }
}
