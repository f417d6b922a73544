package dev.ebb.operator.read;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.observe.Metrics;
import io.fabric8.kubernetes.api.model.Pod;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Reads members' in-flight gauges: one bounded exec per member into its own engine container, all members of a
 * call at once. Every read ends in a {@link Reading}; nothing is thrown at the caller.
 */
@ApplicationScoped
// created with the application, so its meters are scraped before it is first used
@Startup
public class MemberReader {
    private final PodExec exec;
    private final Map<String, Counter> reads = new HashMap<>();
    private final Timer duration;

    /** Every verdict's counter exists from the start, at zero, so a scrape sees the series before the first read. */
    public MemberReader(PodExec exec, MeterRegistry registry) {
        this.exec = exec;
        for (Class<?> verdict : Reading.class.getPermittedSubclasses()) {
            reads.put(
                    verdictOf(verdict),
                    Counter.builder(Metrics.MEMBER_READS)
                            .description("Member reads by what they established")
                            .tag(Metrics.VERDICT, verdictOf(verdict))
                            .register(registry));
        }
        this.duration = Timer.builder(Metrics.MEMBER_READ_DURATION)
                .description("Member reads, exec included")
                .register(registry);
    }

    private static String verdictOf(Class<?> reading) {
        return reading.getSimpleName().toLowerCase(Locale.ROOT);
    }

    /** Nothing happens, and nothing is counted, until the Uni is subscribed to. */
    public Uni<Reading> read(Pod member, Engine engine) {
        return readPage(member, engine).map(GaugePage::gauges);
    }

    /** What one read of the metrics page gave: the in-flight gauges, and the sum of the request counters beside them. */
    private record GaugePage(Reading gauges, Optional<Double> requests) {}

    private Uni<GaugePage> readPage(Pod member, Engine engine) {
        return Uni.createFrom().deferred(() -> readNow(member, engine));
    }

    private Uni<GaugePage> readNow(Pod member, Engine engine) {
        ReadCommand.Built command = ReadCommand.forMember(member, ExecLimits.MEMBER_READ.maxStdoutBytes());
        if (command.command().isEmpty()) {
            return Uni.createFrom()
                    .item(new GaugePage(
                            record(new Reading.Failed(command.refusal()), Duration.ZERO), Optional.empty()));
        }
        long start = System.nanoTime();
        List<InFlightGauges.Gauge> gauges = InFlightGauges.of(engine);
        // the bound is the reader's own promise too, whatever the transport does
        return exec.exec(member, EnginePod.CONTAINER, command.command().get(), ExecLimits.MEMBER_READ)
                .ifNoItem()
                .after(ExecLimits.MEMBER_READ.deadline())
                .recoverWithItem(() -> new ExecResult.TimedOut(ExecLimits.MEMBER_READ.deadline()))
                .onFailure()
                .recoverWithItem(e -> new ExecResult.Failed(e.toString()))
                .map(result -> new GaugePage(
                        record(ReadOutcome.interpret(result, gauges), Duration.ofNanos(System.nanoTime() - start)),
                        ReadOutcome.requests(result, RequestCounters.of(engine))));
    }

    /**
     * The gauges and, on {@code connectionPort}, the connection table, as two bounded execs run together; the table is
     * asked for only where clients reach the member without a router, and the request counters are then taken from
     * the gauges' page.
     */
    public Uni<MemberWork> readWork(Pod member, Engine engine, Optional<Integer> connectionPort) {
        if (connectionPort.isEmpty()) {
            return read(member, engine).map(MemberWork::gaugesOnly);
        }
        return Uni.combine()
                .all()
                .unis(readPage(member, engine), readConnections(member, connectionPort.get()))
                .asTuple()
                .map(both -> new MemberWork(
                        both.getItem1().gauges(),
                        Optional.of(both.getItem2()),
                        both.getItem1().requests()));
    }

    /**
     * No {@code --local-address}: in a Pod the namespace is the member's own, and a filter on one address would miss
     * clients that reach it on another (a dual-stack Pod has two).
     */
    private Uni<ConnectionRead.Peers> readConnections(Pod member, int port) {
        return Uni.createFrom()
                .deferred(() -> exec.exec(
                                member,
                                EnginePod.CONTAINER,
                                ConnectionRead.command(port, Optional.empty()),
                                ExecLimits.CONNECTION_READ)
                        .ifNoItem()
                        .after(ExecLimits.CONNECTION_READ.deadline())
                        .recoverWithItem(() -> new ExecResult.TimedOut(ExecLimits.CONNECTION_READ.deadline()))
                        .onFailure()
                        .recoverWithItem(e -> new ExecResult.Failed(e.toString()))
                        .map(ConnectionRead::interpret));
    }

    /** Reads every member concurrently; each read keeps its own bounds. The readings come back in member order. */
    public Uni<List<Reading>> readAll(List<Pod> members, Engine engine) {
        if (members.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        return Uni.join()
                .all(members.stream().map(m -> read(m, engine)).toList())
                .andCollectFailures();
    }

    private Reading record(Reading reading, Duration took) {
        reads.get(verdictOf(reading.getClass())).increment();
        duration.record(took);
        return reading;
    }
}
