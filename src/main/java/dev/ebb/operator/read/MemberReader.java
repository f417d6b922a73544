package dev.ebb.operator.read;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.observe.Metrics;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Reads members' in-flight gauges: one bounded exec per member into its own engine container, all members of a
 * call at once. Every read ends in a {@link Reading}; nothing is thrown at the caller.
 */
@ApplicationScoped
public class MemberReader {
    private final PodExec exec;
    private final MeterRegistry registry;

    public MemberReader(PodExec exec, MeterRegistry registry) {
        this.exec = exec;
        this.registry = registry;
    }

    public Uni<Reading> read(Pod member, Engine engine) {
        ReadCommand.Built command = ReadCommand.forMember(member, ExecLimits.MEMBER_READ.maxStdoutBytes());
        if (command.argv().isEmpty()) {
            return Uni.createFrom().item(record(new Reading.Failed(command.refusal()), Duration.ZERO));
        }
        long start = System.nanoTime();
        List<String> gauges = InFlightGauges.of(engine);
        // the bound is the reader's own promise too, whatever the transport does
        return exec.exec(member, PodRenderer.ENGINE_CONTAINER, command.argv().get(), ExecLimits.MEMBER_READ)
                .ifNoItem().after(ExecLimits.MEMBER_READ.deadline()).recoverWithItem(() -> new ExecResult.TimedOut(ExecLimits.MEMBER_READ.deadline()))
                .onFailure().recoverWithItem(e -> new ExecResult.Failed(e.toString()))
                .map(result -> record(ReadOutcome.interpret(result, gauges), Duration.ofNanos(System.nanoTime() - start)));
    }

    /** Reads every member concurrently; each read keeps its own bounds. The readings come back in member order. */
    public Uni<List<Reading>> readAll(List<Pod> members, Engine engine) {
        if (members.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        return Uni.join().all(members.stream().map(m -> read(m, engine)).toList()).andCollectFailures();
    }

    private Reading record(Reading reading, Duration took) {
        String verdict = reading.getClass().getSimpleName().toLowerCase(Locale.ROOT);
        Counter.builder(Metrics.MEMBER_READS).description("Member reads by what they established")
                .tag(Metrics.VERDICT, verdict).register(registry).increment();
        Timer.builder(Metrics.MEMBER_READ_DURATION).description("Member reads, exec included")
                .register(registry).record(took);
        return reading;
    }
}
