package dev.ebb.operator.sandbox;

import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * One choreography played with one way of removing replicas: every request of the set (its id is its index there),
 * what happened to each replica, and when the first step was taken.
 *
 * @param origin when the run began: every time in its marks counts from here
 * @param changed when the first step of the choreography was taken (the spec change, or the deletes); null if none was
 * @param refusals times a request was refused before it streamed and sent again
 */
public record Run(
        Removal removal,
        Choreography choreography,
        Instant origin,
        double seconds,
        List<LoadGenerator.Request> requests,
        long refusals,
        Instant changed,
        List<Timeline.Mark> marks) {

    /** Seconds from the start of the run to this moment, as the marks count. */
    public double at(Instant moment) {
        return Duration.between(origin, moment).toNanos() / 1e9;
    }

    /** Seconds from the start of the run to the first request sent; 0 when the run has no such step. */
    public double loadStartsAt() {
        return marks.stream()
                .filter(m -> m.kind() == Timeline.Kind.STEP && m.detail().equals(Timeline.LOAD_STARTS))
                .mapToDouble(Timeline.Mark::at)
                .findFirst()
                .orElse(0);
    }

    public long count(Outcome outcome) {
        return requests.stream().filter(r -> r.outcome() == outcome).count();
    }

    public long completed() {
        return count(Outcome.COMPLETED);
    }

    public long cut() {
        return count(Outcome.CUT);
    }

    /** Requests that never streamed: refused until the run stopped sending. */
    public long rejected() {
        return count(Outcome.REJECTED);
    }

    /** Cut requests whose whole generation would have outlasted the grace: no hook could have saved them by waiting. */
    public long cutLongerThanGrace() {
        Duration grace = Duration.ofSeconds(choreography.grace());
        return requests.stream()
                .filter(r -> r.outcome() == Outcome.CUT && planned(r).compareTo(grace) > 0)
                .count();
    }

    /** Seconds from the first step to the last Pod gone after it: the last leaving replica, or the last old one of a rollout. */
    public OptionalDouble wallTime() {
        if (changed == null) {
            return OptionalDouble.empty();
        }
        double changedAt = at(changed);
        return marks.stream()
                .filter(m -> m.kind() == Timeline.Kind.GONE && m.at() >= changedAt)
                .mapToDouble(Timeline.Mark::at)
                .max()
                .stream()
                .map(at -> at - changedAt)
                .findFirst();
    }

    /**
     * For a scale-down: the longest generation still to stream at the change on the replicas an ideal choice would
     * retire, plus the least time of the drain hook ({@link DrainTimelines#IDLE_RETURN}). Empty for anything else.
     */
    public OptionalDouble floor() {
        if (changed == null
                || choreography.steps().isEmpty()
                || !(choreography.steps().get(0) instanceof Choreography.ScaleTo scale)) {
            return OptionalDouble.empty();
        }
        List<Floor.InFlight> inFlight = requests.stream()
                .filter(r -> r.pod() != null && r.start().isBefore(changed))
                .map(r -> new Floor.InFlight(
                        r.pod(),
                        Duration.between(changed, r.start().plus(planned(r))).toMillis() / 1000.0))
                .filter(f -> f.remaining() > 0)
                .toList();
        List<String> replicas = IntStream.range(0, choreography.replicas())
                .mapToObj(i -> Names.pod(OperatorFleet.NAME, OperatorFleet.ROLE, i, 0))
                .toList();
        return OptionalDouble.of(Floor.seconds(
                inFlight, replicas, choreography.replicas() - scale.replicas(), DrainTimelines.IDLE_RETURN));
    }

    /**
     * For a scale-down: the planned end of the last generation sent to the replicas that did leave (those gone after the
     * change), counted from the change, plus the least time of the drain hook. That is what removing exactly those
     * replicas takes without a cut, whoever chose them: wall time over it is what the removal itself adds, and it over
     * {@link #floor} is what its choice of replicas cost. Empty for anything else.
     */
    public OptionalDouble floorOfLeaving() {
        if (floor().isEmpty()) {
            return OptionalDouble.empty();
        }
        double changedAt = at(changed);
        Set<String> left = marks.stream()
                .filter(m -> m.kind() == Timeline.Kind.GONE && m.at() >= changedAt)
                .map(Timeline.Mark::pod)
                .collect(Collectors.toSet());
        double lastEnd = requests.stream()
                .filter(r -> left.contains(r.pod()))
                .mapToDouble(r -> at(r.start().plus(planned(r))) - changedAt)
                .max()
                .orElse(0);
        return OptionalDouble.of(Math.max(0, lastEnd) + DrainTimelines.IDLE_RETURN);
    }

    private Duration planned(LoadGenerator.Request r) {
        return choreography.load().duration(choreography.load().lengths().get((int) r.id()));
    }

    /** The replicas in the order they first appeared. */
    public List<String> pods() {
        return marks.stream()
                .map(Timeline.Mark::pod)
                .filter(p -> !p.isEmpty())
                .distinct()
                .toList();
    }
}
