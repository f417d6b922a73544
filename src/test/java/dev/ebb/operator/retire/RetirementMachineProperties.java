package dev.ebb.operator.retire;

import static dev.ebb.operator.retire.RetirementMachineTest.FOLLOWER;
import static dev.ebb.operator.retire.RetirementMachineTest.LEADER;
import static dev.ebb.operator.retire.RetirementMachineTest.T0;
import static dev.ebb.operator.retire.RetirementMachineTest.TARGETS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.Reading;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Over random histories, the machine deletes only what it has proven idle, and is silent once it has aborted. */
class RetirementMachineProperties {

    /** One pass of the shell, as random as the world can make it. */
    record Event(int advanceMillis, Observation.Withdrawal withdrawal, Reading reading, boolean restart, boolean followerGone,
            boolean apiError) {
    }

    @Provide
    Arbitrary<List<Event>> histories() {
        Arbitrary<Reading> readings = Arbitraries.oneOf(
                Arbitraries.just(new Reading.Idle()),
                Arbitraries.doubles().between(0.5, 50).map(Reading.Busy::new),
                Arbitraries.just(new Reading.Partial(List.of("vllm:num_requests_waiting"))),
                Arbitraries.just(new Reading.Failed("timed out")));
        Arbitrary<Observation.Withdrawal> withdrawals = Combinators.combine(
                Arbitraries.of(true, true, true, false),
                Arbitraries.of(true, true, false),
                Arbitraries.of(Optional.of(false), Optional.of(false), Optional.of(true), Optional.<Boolean>empty()),
                Arbitraries.of(false, false, false, true))
                .as(Observation.Withdrawal::new);
        Arbitrary<Event> event = Combinators.combine(
                Arbitraries.integers().between(-5_000, 40_000),
                withdrawals,
                readings.injectNull(0.2),
                Arbitraries.of(false, false, false, false, false, false, false, true),
                Arbitraries.of(false, false, false, false, false, false, false, false, false, true),
                Arbitraries.of(false, false, false, true))
                .as(Event::new);
        return event.list().ofMinSize(1).ofMaxSize(60);
    }

    @Property(tries = 3000)
    void deletesOnlyAfterWithdrawalAndTwoIdleReadsInARowWithNoRestartAndNothingAfterAnAbort(@ForAll("histories") List<Event> history) {
        Retirement retirement = RetirementMachine.begin("server", 2, "ScaleDown", TARGETS,
                new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())), T0).retirement();
        Instant now = T0;
        boolean draining = false;
        boolean restarted = false;
        boolean followerGone = false;
        List<Reading> sinceDraining = new ArrayList<>();

        for (Event e : history) {
            now = now.plusMillis(e.advanceMillis());
            restarted |= e.restart();
            followerGone |= e.followerGone();
            Map<String, Observation.Present> members = new HashMap<>();
            members.put(LEADER.name(), new Observation.Present(LEADER.uid(), restarted ? "c-0-restarted" : LEADER.containerId()));
            if (!followerGone) {
                members.put(FOLLOWER.name(), new Observation.Present(FOLLOWER.uid(), FOLLOWER.containerId()));
            }
            // an API error means the shell could not read this pass
            Map<String, Reading> reads = e.reading() == null || e.apiError() ? Map.of() : Map.of(LEADER.name(), e.reading());
            Observation seen = new Observation(now, members, e.withdrawal(), reads);
            RetirementState before = retirement.state();

            RetirementMachine.Step step = RetirementMachine.step(retirement, seen);

            if (before == RetirementState.Aborted) {
                assertThat(step.actions()).as("silent after an abort").isEmpty();
            }
            if (draining && !reads.isEmpty()) {
                sinceDraining.add(reads.get(LEADER.name()));
            }
            List<Member> deleted = step.actions().stream().filter(a -> a instanceof Action.Delete)
                    .flatMap(a -> ((Action.Delete) a).members().stream()).toList();
            if (before.pastDeletion()) {
                assertThat(deleted).as("past the deletion, only reserved members still there undeleted are deleted again")
                        .allMatch(m -> TARGETS.contains(m) && members.containsKey(m.name()) && !members.get(m.name()).terminating());
            } else if (!deleted.isEmpty()) {
                assertThat(draining).as("withdrawal was confirmed before the delete").isTrue();
                assertThat(restarted).as("no restart before the delete").isFalse();
                assertThat(followerGone).as("every reserved member still there").isFalse();
                assertThat(sinceDraining).hasSizeGreaterThanOrEqualTo(2);
                assertThat(sinceDraining.subList(sinceDraining.size() - 2, sinceDraining.size()))
                        .as("the last two reads were idle").allMatch(r -> r instanceof Reading.Idle);
            }
            if (before == RetirementState.Withdrawing && step.retirement().state() == RetirementState.Draining) {
                Observation.Withdrawal w = e.withdrawal();
                assertThat(w.routed() && w.endpointsClear() && w.routerSelects().equals(Optional.of(false)) && !w.dispatchedSinceWithdrawal())
                        .as("draining starts only on a confirmed withdrawal").isTrue();
                draining = true;
            }
            retirement = step.retirement();
        }
    }
}
