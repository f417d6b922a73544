package dev.ebb.operator.sandbox;

import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import java.util.List;

/** One choreography played with one way of removing replicas: every request, and what happened to each replica. */
public record Run(Removal removal, Choreography choreography, double seconds, List<LoadGenerator.Request> requests,
        List<Timeline.Mark> marks) {

    public long count(Outcome outcome) {
        return requests.stream().filter(r -> r.outcome() == outcome).count();
    }

    public long completed() {
        return count(Outcome.COMPLETED);
    }

    public long cut() {
        return count(Outcome.CUT);
    }

    public long rejected() {
        return count(Outcome.REJECTED);
    }

    /** The replicas in the order they first appeared. */
    public List<String> pods() {
        return marks.stream().map(Timeline.Mark::pod).filter(p -> !p.isEmpty()).distinct().toList();
    }
}
