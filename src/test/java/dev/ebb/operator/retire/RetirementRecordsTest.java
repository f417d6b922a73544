package dev.ebb.operator.retire;

import static dev.ebb.operator.retire.EditedStatus.edited;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.api.v1alpha1.AbortedRetirement;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.read.Reading;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RetirementRecordsTest {
    private static final RetirementMachine MACHINE = new RetirementMachine();

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void aDrainingRetirementSurvivesTheTripThroughStatusJson() throws Exception {
        Retirement draining = RetirementMachineTest.step(
                        RetirementMachineTest.draining(),
                        RetirementMachineTest.reads(RetirementMachineTest.at(3), new Reading.Idle()))
                .retirement();

        RetirementRecord record = new RetirementRecord(draining, "idlest", Optional.of("t1"), 2);
        String written = json.writeValueAsString(RetirementRecords.toStatus(record));
        RetirementStatus read = json.readValue(written, RetirementStatus.class);

        assertThat(RetirementRecords.fromStatus(read)).contains(record);
        assertThat(read.deadline()).isEqualTo("2026-01-01T00:05:00Z");
        assertThat(read.attempt()).isEqualTo(2);
        assertThat(read.drainSeconds()).isEqualTo(240);
        assertThat(read.state()).isEqualTo("Draining");
        assertThat(read.retryToken()).isEqualTo("t1");
        assertThat(read.reads())
                .singleElement()
                .satisfies(r -> assertThat(r.consecutiveIdle()).isEqualTo(1));
    }

    @Test
    void abortsSurviveTheTripThroughStatusJsonAndSayWhenEachIsRetried() throws Exception {
        Instant at = RetirementMachineTest.T0;
        List<NextRetirement.Abort> aborts = List.of(
                new NextRetirement.Abort(
                        "prefill",
                        1,
                        NextRetirement.SCALE_DOWN,
                        Reason.DISAGGREGATED,
                        "refused",
                        at,
                        Optional.empty(),
                        1,
                        3),
                new NextRetirement.Abort(
                        "server", 2, NextRetirement.ROLLOUT, Reason.BUSY, "busy", at, Optional.of("t1"), 2, 3),
                new NextRetirement.Abort(
                        "server", 3, NextRetirement.SURPLUS, Reason.BUSY, "busy", at, Optional.empty(), 3, 3));
        List<AbortedRetirement> written = RetirementRecords.toStatus(aborts, Duration.ofMinutes(5));
        List<AbortedRetirement> read =
                List.of(json.readValue(json.writeValueAsString(written), AbortedRetirement[].class));

        assertThat(read)
                .extracting(AbortedRetirement::retryAt)
                .as("refused; second abort in a row; third, blocked but still retried")
                .containsExactly(null, "2026-01-01T00:10:00Z", "2026-01-01T00:20:00Z");
        assertThat(RetirementRecords.aborts(statusWith(read))).isEqualTo(aborts);
    }

    @Test
    void anAbortEditedIntoNonsenseHoldsNothingBack() {
        AbortedRetirement good = new AbortedRetirement(
                "server", 2, null, null, null, Reason.BUSY.wire(), "busy", "2026-01-01T00:00:00Z", null, null);
        List<AbortedRetirement> entries = List.of(
                good,
                new AbortedRetirement(
                        "server", null, null, 1, 1L, Reason.BUSY.wire(), "busy", "2026-01-01T00:00:00Z", null, null),
                new AbortedRetirement("server", 3, null, 1, 1L, null, "busy", "2026-01-01T00:00:00Z", null, null),
                new AbortedRetirement("server", 4, null, 1, 1L, Reason.BUSY.wire(), "busy", "yesterday", null, null));

        assertThat(RetirementRecords.aborts(statusWith(entries)))
                .singleElement()
                .as("an entry without cause or count reads as a reduction's first abort")
                .isEqualTo(new NextRetirement.Abort(
                        "server",
                        2,
                        NextRetirement.SCALE_DOWN,
                        Reason.BUSY,
                        "busy",
                        RetirementMachineTest.T0,
                        Optional.empty(),
                        1,
                        0));
        assertThat(RetirementRecords.aborts(null)).isEmpty();
    }

    private static ModelDeploymentStatus statusWith(List<AbortedRetirement> aborted) {
        return new ModelDeploymentStatus(1L, "Ready", null, List.of(), null, null, List.of(), aborted, List.of());
    }

    @Test
    void aStandingHoldIsKept() {
        Retirement held = MACHINE.begin(
                        "s",
                        1,
                        "Surplus",
                        RetirementMachineTest.TARGETS,
                        new Classification.Held(Reason.TAKE_OVER, "take-over"),
                        Optional.empty(),
                        Budgets.DRAINING,
                        RetirementMachineTest.T0)
                .retirement();

        RetirementRecord record = new RetirementRecord(held, null, Optional.empty(), 1);
        assertThat(RetirementRecords.fromStatus(RetirementRecords.toStatus(record)))
                .contains(record);
    }

    @Test
    void aRecordEditedIntoNonsenseIsNotResumed() {
        RetirementStatus good = RetirementRecords.toStatus(
                new RetirementRecord(RetirementMachineTest.draining(), null, Optional.empty(), 1));
        List<RetirementStatus> broken = List.of(
                edited(good, "state", "Exploding"),
                edited(good, "startedAt", "yesterday"),
                edited(good, "roleName", null),
                edited(good, "replicaOrdinal", null),
                edited(good, "targetMembers", List.of(new RetirementStatus.TargetMember("m", null, "c"))));

        assertThat(broken)
                .allSatisfy(b -> assertThat(RetirementRecords.fromStatus(b)).isEmpty());
        List<RetirementStatus> withGood = new java.util.ArrayList<>(broken);
        withGood.add(good);
        assertThat(RetirementRecords.fromStatus(new ModelDeploymentStatus(
                        1L, "Ready", null, List.of(), null, null, withGood, List.of(), List.of())))
                .as("one readable entry among broken ones is still resumed")
                .hasSize(1);
    }

    @Test
    void anEntryWhoseReasonNoRetirementGivesIsNotBelieved() {
        RetirementStatus good = RetirementRecords.toStatus(
                new RetirementRecord(RetirementMachineTest.draining(), null, Optional.empty(), 1));
        List<RetirementStatus> garbled = List.of(
                edited(good, "reason", "Exploding"),
                edited(good, "reason", "awaitingreads"),
                edited(good, "reason", null),
                edited(good, "holdReason", "Exploding"));
        AbortedRetirement abort = new AbortedRetirement(
                "server", 2, null, 1, 1L, "Exploding", "busy", "2026-01-01T00:00:00Z", null, null);

        assertThat(RetirementRecords.fromStatus(good)).isPresent();
        assertThat(garbled)
                .as("resumed from nothing it says: the work is looked at afresh and nothing is deleted on its strength")
                .allSatisfy(b -> assertThat(RetirementRecords.fromStatus(b)).isEmpty());
        assertThat(RetirementRecords.aborts(statusWith(List.of(abort))))
                .as("an abort with such a reason holds nothing back: its replica is proven idle again when retried")
                .isEmpty();
    }

    @Test
    void anEntryWhoseReadHoldsAVerdictNoReadGivesIsNotBelieved() {
        Retirement idleOnce = RetirementMachineTest.step(
                        RetirementMachineTest.draining(),
                        RetirementMachineTest.reads(RetirementMachineTest.at(3), new Reading.Idle()))
                .retirement();
        RetirementStatus good = RetirementRecords.toStatus(new RetirementRecord(idleOnce, null, Optional.empty(), 1));
        RetirementStatus.MemberRead read = good.reads().get(0);

        assertThat(read.verdict()).isEqualTo("Idle");
        assertThat(RetirementRecords.fromStatus(good)).isPresent();
        assertThat(List.of("Exploding", "idle"))
                .allSatisfy(verdict -> assertThat(RetirementRecords.fromStatus(edited(
                                good,
                                "reads",
                                List.of(new RetirementStatus.MemberRead(
                                        read.member(),
                                        verdict,
                                        read.inFlight(),
                                        read.consecutiveIdle(),
                                        read.time())))))
                        .isEmpty());
    }

    @Test
    void aRecordWrittenWithoutADrainBudgetDrainsWithTheDefault() {
        RetirementStatus good = RetirementRecords.toStatus(
                new RetirementRecord(RetirementMachineTest.draining(), null, Optional.empty(), 1));
        RetirementStatus old = edited(edited(good, "attempt", null), "drainSeconds", null);

        assertThat(RetirementRecords.fromStatus(old).orElseThrow().retirement().drainBudget())
                .isEqualTo(Budgets.DRAINING);
    }

    @Test
    void aLongerDrainBudgetMovesTheDeadline() {
        Retirement patient = RetirementFrom.from(RetirementMachineTest.draining())
                .drainBudget(Duration.ofHours(1))
                .get();

        assertThat(RetirementRecords.toStatus(new RetirementRecord(patient, null, Optional.empty(), 1))
                        .deadline())
                .as("30 s to withdraw, an hour to drain, 30 s to spare")
                .isEqualTo("2026-01-01T01:01:00Z");
    }
}
