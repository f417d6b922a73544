package dev.ebb.operator.retire;

import static dev.ebb.operator.retire.RetirementMachineTest.BASELINE;
import static dev.ebb.operator.retire.RetirementMachineTest.FOLLOWER;
import static dev.ebb.operator.retire.RetirementMachineTest.FRONT_END_LAG;
import static dev.ebb.operator.retire.RetirementMachineTest.LEADER;
import static dev.ebb.operator.retire.RetirementMachineTest.PROPAGATION;
import static dev.ebb.operator.retire.RetirementMachineTest.T0;
import static dev.ebb.operator.retire.RetirementMachineTest.TARGETS;
import static dev.ebb.operator.retire.SeenWithdrawal.withdrawal;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.Reading;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;

/**
 * Over random histories, the machine deletes only what it has proven idle, by idle reads at least a second apart, since
 * a withdrawal that still holds; it deletes nothing but its reserved members, gives everything back when it aborts, and
 * is silent once it has aborted. Without a router, idle also means no client connected, and reads count only once the
 * endpoint change has had its propagation margin since the endpoints were (last) seen clear.
 */
class RetirementMachineProperties {
    private static final RetirementMachine MACHINE = new RetirementMachine();

    /** What the router reports for the targets: the counts read before the withdrawal, or a dispatch since. */
    private static final Map<String, Double> UNMOVED = BASELINE.orElseThrow();

    /** What became of a reserved member by this pass, as the shell finds it. */
    enum Fate {
        PRESENT,
        MISSING,
        REPLACED,
        TERMINATING
    }

    /** One pass of the shell, as random as the world can make it. */
    record Event(
            int advanceMillis,
            Observation.Withdrawal withdrawal,
            PassRead read,
            boolean leaderRestart,
            boolean followerRestart,
            Fate leaderFate,
            Fate followerFate,
            boolean apiError) {
        Reading reading() {
            return read == null ? null : read.gauges();
        }
    }

    /** The leader's gauges and, read in the same pass where there is no router, its connection table (null: not read). */
    record PassRead(Reading gauges, ConnectionRead.Peers peers) {}

    @Provide
    Arbitrary<List<Event>> histories() {
        Arbitrary<Reading> readings = Arbitraries.oneOf(
                Arbitraries.just(new Reading.Idle()),
                Arbitraries.just(new Reading.Idle()),
                Arbitraries.doubles().between(0.5, 50).map(Reading.Busy::new),
                Arbitraries.just(new Reading.Partial(List.of("vllm:num_requests_waiting"))),
                Arbitraries.just(new Reading.Failed("timed out")));
        Arbitrary<ConnectionRead.Peers> peers = Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.just(new ConnectionRead.Peers.Connected(0, List.of()))),
                Tuple.of(2, Arbitraries.just(new ConnectionRead.Peers.Connected(1, List.of("10.0.0.9:51234")))),
                Tuple.of(
                        1,
                        Arbitraries.just(new ConnectionRead.Peers.Unknown("the connection read exited with code 7"))));
        Arbitrary<PassRead> reads =
                Combinators.combine(readings, peers.injectNull(0.1)).as(PassRead::new);
        // drawn as a routed deployment sees them; a history without a router keeps only what it can see (see unrouted)
        Arbitrary<Observation.Withdrawal> anyWithdrawal = Combinators.combine(
                        Arbitraries.just(true),
                        Arbitraries.<Set<String>>of(
                                Set.of(),
                                Set.of(),
                                Set.of(),
                                Set.of(),
                                Set.of(),
                                Set.of(LEADER.name()),
                                Set.of(FOLLOWER.name())),
                        Arbitraries.<Optional<Boolean>>of(
                                Optional.of(true),
                                Optional.of(true),
                                Optional.of(true),
                                Optional.of(false),
                                Optional.empty()),
                        Arbitraries.<Optional<Boolean>>of(
                                Optional.of(false),
                                Optional.of(false),
                                Optional.of(false),
                                Optional.of(true),
                                Optional.empty()),
                        Arbitraries.<Map<String, Double>>of(
                                UNMOVED, UNMOVED, UNMOVED, Map.of(LEADER.name(), 8.0), Map.of(FOLLOWER.name(), 1.0)))
                .as(Observation.Withdrawal::new);
        // mostly a withdrawal that holds, so that histories reach the deletion as well as every way of missing it
        Arbitrary<Observation.Withdrawal> withdrawals = Arbitraries.frequencyOf(
                Tuple.of(
                        3,
                        Arbitraries.just(withdrawal()
                                .routed()
                                .endpointsClear(true)
                                .routerSelects(false)
                                .dispatches(UNMOVED)
                                .get())),
                Tuple.of(1, anyWithdrawal));
        // passes a second apart as the shell runs them, some closer (events, a restart), some far apart (a stall)
        Arbitrary<Integer> advances = Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.integers().between(900, 1_500)),
                Tuple.of(2, Arbitraries.integers().between(0, 999)),
                Tuple.of(1, Arbitraries.integers().between(-5_000, 40_000)));
        Arbitrary<Fate> fates = Arbitraries.frequencyOf(
                Tuple.of(400, Arbitraries.just(Fate.PRESENT)),
                Tuple.of(1, Arbitraries.just(Fate.MISSING)),
                Tuple.of(1, Arbitraries.just(Fate.REPLACED)),
                Tuple.of(1, Arbitraries.just(Fate.TERMINATING)));
        Arbitrary<Boolean> rarely =
                Arbitraries.frequencyOf(Tuple.of(150, Arbitraries.just(false)), Tuple.of(1, Arbitraries.just(true)));
        Arbitrary<Event> event = Combinators.combine(
                        advances,
                        withdrawals,
                        reads.injectNull(0.2),
                        rarely,
                        rarely,
                        fates,
                        fates,
                        Arbitraries.of(false, false, false, true))
                .as(Event::new);
        return event.list().ofMinSize(1).ofMaxSize(60);
    }

    @Provide
    Arbitrary<Boolean> mostlyTrue() {
        return Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(true)), Tuple.of(1, Arbitraries.just(false)));
    }

    private static Observation.Present present(Member reserved, Fate fate, boolean restarted) {
        return switch (fate) {
            case REPLACED -> new Observation.Present("uid-other-" + reserved.name(), "c-other");
            case TERMINATING -> new Observation.Present(reserved.uid(), reserved.containerId(), true);
            default ->
                new Observation.Present(
                        reserved.uid(), restarted ? reserved.containerId() + "-restarted" : reserved.containerId());
        };
    }

    /** What becomes of a member sticks, but a Terminating one may go. */
    private static Fate next(Fate before, Fate drawn) {
        return before == Fate.PRESENT || before == Fate.TERMINATING && drawn == Fate.MISSING ? drawn : before;
    }

    /** Whether a pass's evidence, dispatch counts aside, says nothing gives the target new work. */
    private static boolean outOfEveryPath(Observation.Withdrawal w) {
        return w.routed()
                && w.stillServing().isEmpty()
                && w.endpointsClear().equals(Optional.of(true))
                && w.routerSelects().equals(Optional.of(false));
    }

    /** Members as a deletion names them: by name and uid; the container bound may have moved on after a restart. */
    private static java.util.Set<String> identities(List<Member> members) {
        return members.stream().map(m -> m.name() + "/" + m.uid()).collect(java.util.stream.Collectors.toSet());
    }

    /** Whether a count moved from the reference: a positive count other than the one kept (a count at zero is a router restart). */
    private static boolean moved(Map<String, Double> counts, Map<String, Double> reference) {
        return counts.entrySet().stream()
                .anyMatch(c -> c.getValue() > 0 && !c.getValue().equals(reference.getOrDefault(c.getKey(), 0.0)));
    }

    /** Whether a pass's withdrawal evidence is complete against the counts kept for comparison, judged without the machine's code. */
    private static boolean confirmed(Observation.Withdrawal w, Optional<Map<String, Double>> reference) {
        return outOfEveryPath(w) && reference.isPresent() && !moved(w.dispatches(), reference.get());
    }

    /** A pass as a deployment without a router sees it: no router to ask, no dispatch counted. */
    private static Observation.Withdrawal unrouted(Observation.Withdrawal w) {
        return new Observation.Withdrawal(false, w.stillServing(), w.endpointsClear(), Optional.empty(), Map.of());
    }

    /** Without a router the label and the endpoints are every path there is. */
    private static boolean clearWithoutRouter(Observation.Withdrawal w) {
        return w.stillServing().isEmpty() && w.endpointsClear().equals(Optional.of(true));
    }

    /** The counts with a zero for each target, as a reference is kept. */
    private static Map<String, Double> referenceOf(Map<String, Double> counts) {
        Map<String, Double> reference = new HashMap<>(counts);
        TARGETS.forEach(m -> reference.putIfAbsent(m.name(), 0.0));
        return reference;
    }

    @Property(tries = 3000)
    void deletesOnlyReservedMembersProvenIdleSinceAWithdrawalThatHoldsAndRestoresOnEveryAbort(
            @ForAll("histories") List<Event> history,
            @ForAll("mostlyTrue") boolean baselineRead,
            @ForAll boolean routed) {
        // without a router nothing is counted, and the shell begins with that empty baseline
        Optional<Map<String, Double>> baseline =
                !routed ? Optional.of(Map.of()) : baselineRead ? BASELINE : Optional.empty();
        Retirement retirement = MACHINE.begin(
                        "server",
                        2,
                        "ScaleDown",
                        TARGETS,
                        new Classification.Answerable(Engine.VLLM, List.of(LEADER.name())),
                        baseline,
                        Budgets.DRAINING,
                        T0)
                .retirement();
        Instant now = T0;
        boolean restarted = false;
        // a restart the machine has taken in: it binds the new containers on a draining pass whose withdrawal holds
        boolean restartBound = false;
        Fate leaderFate = Fate.PRESENT;
        Fate followerFate = Fate.PRESENT;
        int idleRun = 0;
        Instant lastCountedIdle = null;
        int provingDeletes = 0;
        // the counts the machine compares with: read before the withdrawal, taken when the router first answers before
        // anything is withdrawn, and moved on while withdrawing by a dispatch the router made as it learned of it
        Optional<Map<String, Double>> reference = baselineRead ? Optional.of(UNMOVED) : Optional.empty();
        // when the withdrawal was last seen to hold while draining, null while it is lost
        Instant clearSince = null;
        // once a pass found the margin over, it stays over until the withdrawal is lost again, even if a later pass's
        // clock reads earlier (a clock stepped back)
        boolean marginOver = false;

        for (Event e : history) {
            now = now.plusMillis(e.advanceMillis());
            restarted |= e.leaderRestart() || e.followerRestart();
            leaderFate = next(leaderFate, e.leaderFate());
            followerFate = next(followerFate, e.followerFate());
            Map<String, Observation.Present> members = new HashMap<>();
            if (leaderFate != Fate.MISSING) {
                members.put(LEADER.name(), present(LEADER, leaderFate, restarted));
            }
            if (followerFate != Fate.MISSING) {
                members.put(FOLLOWER.name(), present(FOLLOWER, followerFate, restarted));
            }
            boolean lost = leaderFate != Fate.PRESENT || followerFate != Fate.PRESENT;
            // an API error means the shell could not read this pass
            Map<String, Reading> reads =
                    e.reading() == null || e.apiError() ? Map.of() : Map.of(LEADER.name(), e.reading());
            Map<String, ConnectionRead.Peers> tables =
                    reads.isEmpty() || routed || e.read().peers() == null
                            ? Map.of()
                            : Map.of(LEADER.name(), e.read().peers());
            Observation.Withdrawal withdrawal = routed ? e.withdrawal() : unrouted(e.withdrawal());
            Observation seen = new Observation(now, members, withdrawal, reads, tables, Map.of());
            RetirementState before = retirement.state();

            RetirementMachine.Step step = RetirementMachineTest.lagging(retirement, seen);
            RetirementState after = step.retirement().state();

            Optional<Map<String, Double>> referenceBefore = reference;
            if (before == RetirementState.Withdrawing && !lost && routed) {
                Observation.Withdrawal w = withdrawal;
                boolean nothingWithdrawn =
                        TARGETS.stream().allMatch(m -> w.stillServing().contains(m.name()));
                if (reference.isEmpty() && w.routerSelects().isPresent() && nothingWithdrawn) {
                    reference = Optional.of(referenceOf(w.dispatches()));
                } else if (reference.isPresent() && outOfEveryPath(w) && moved(w.dispatches(), reference.get())) {
                    reference = Optional.of(referenceOf(w.dispatches()));
                }
            }
            if (before == RetirementState.Draining) {
                boolean holds = routed ? confirmed(withdrawal, reference) : clearWithoutRouter(withdrawal);
                boolean idleRead = reads.get(LEADER.name()) instanceof Reading.Idle
                        && (routed
                                || new ConnectionRead.Peers.Connected(0, List.of()).equals(tables.get(LEADER.name())));
                if (!holds) {
                    idleRun = 0;
                    clearSince = null;
                    marginOver = false;
                } else if (restarted && !restartBound) {
                    // the new process is proven idle from the start; the margin, about the paths to it, runs on
                    restartBound = true;
                    idleRun = 0;
                } else if (clearSince == null) {
                    // seen clear again: the margin starts now, and this pass's read proves nothing
                    clearSince = now;
                    marginOver = false;
                    idleRun = 0;
                } else if (!marginOver && now.isBefore(clearSince.plus(routed ? FRONT_END_LAG : PROPAGATION))) {
                    idleRun = 0;
                } else if (!reads.isEmpty() && !idleRead) {
                    marginOver = true;
                    idleRun = 0;
                } else if (!reads.isEmpty() && (idleRun == 0 || !now.isBefore(lastCountedIdle.plusSeconds(1)))) {
                    // an idle read counts only a second or more after the last one that counted
                    marginOver = true;
                    idleRun++;
                    lastCountedIdle = now;
                }
            }
            if (before == RetirementState.Aborted) {
                assertThat(step.actions()).as("silent after an abort").isEmpty();
                assertThat(step.retirement()).isEqualTo(retirement);
            }
            if (after == RetirementState.Aborted && before != RetirementState.Aborted) {
                assertThat(step.actions())
                        .as("an abort gives everything back")
                        .noneMatch(a -> a instanceof Action.Delete)
                        .anySatisfy(a -> assertThat(a)
                                .isInstanceOfSatisfying(
                                        Action.Restore.class,
                                        restore -> assertThat(identities(restore.members()))
                                                .isEqualTo(identities(TARGETS))));
            }
            if (lost && !before.pastDeletion() && !before.ended()) {
                assertThat(after).as("a member lost before the deletion aborts").isEqualTo(RetirementState.Aborted);
                assertThat(step.retirement().reason()).isIn(Reason.TERMINATED_OUTSIDE);
            }
            boolean confirmedBefore = routed ? confirmed(withdrawal, referenceBefore) : clearWithoutRouter(withdrawal);
            if (before == RetirementState.Withdrawing && after == RetirementState.Draining) {
                assertThat(confirmedBefore)
                        .as("draining starts only on a confirmed withdrawal")
                        .isTrue();
                clearSince = now;
                marginOver = false;
            }
            if (before == RetirementState.Draining && after == RetirementState.Draining && !confirmedBefore) {
                assertThat(step.retirement().reason())
                        .as("a relapse while draining holds")
                        .isEqualTo(Reason.WITHDRAWAL_LOST);
            }

            List<Member> deleted = step.actions().stream()
                    .filter(a -> a instanceof Action.Delete)
                    .flatMap(a -> ((Action.Delete) a).members().stream())
                    .toList();
            assertThat(identities(deleted))
                    .as("only reserved members, each under its reserved uid")
                    .isSubsetOf(identities(TARGETS));
            if (before.pastDeletion()) {
                assertThat(deleted)
                        .as("past the deletion, only reserved members still there undeleted are deleted again")
                        .allMatch(m -> members.containsKey(m.name())
                                && members.get(m.name()).uid().equals(m.uid())
                                && !members.get(m.name()).terminating());
            } else if (!deleted.isEmpty()) {
                provingDeletes++;
                assertThat(before).as("deleted only from Draining").isEqualTo(RetirementState.Draining);
                assertThat(identities(deleted)).as("the whole reservation").isEqualTo(identities(TARGETS));
                assertThat(confirmedBefore)
                        .as("the withdrawal still holds at the delete")
                        .isTrue();
                assertThat(restarted && !restartBound)
                        .as("no restart the idle proof has not started over on")
                        .isFalse();
                assertThat(lost).as("every reserved member still there").isFalse();
                assertThat(idleRun)
                        .as("two idle reads in a row since the withdrawal last held")
                        .isGreaterThanOrEqualTo(2);
            }
            assertThat(provingDeletes).as("one decision to delete").isLessThanOrEqualTo(1);
            retirement = step.retirement();
        }
        Statistics.label("last state").collect(routed ? "with a router" : "without", retirement.state());
    }
}
