package dev.ebb.operator.retire;

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
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void aDrainingRetirementSurvivesTheTripThroughStatusJson() throws Exception {
        Retirement draining = RetirementMachineTest.step(RetirementMachineTest.draining(),
                RetirementMachineTest.reads(RetirementMachineTest.at(3), new Reading.Idle())).retirement();

        String written = json.writeValueAsString(RetirementRecords.toStatus(draining, null, "t1"));
        RetirementStatus read = json.readValue(written, RetirementStatus.class);

        assertThat(RetirementRecords.fromStatus(read)).contains(draining);
        assertThat(read.deadline()).isEqualTo("2026-01-01T00:05:00Z");
        assertThat(read.state()).isEqualTo("Draining");
        assertThat(read.retryToken()).isEqualTo("t1");
        assertThat(read.reads()).singleElement().satisfies(r -> assertThat(r.consecutiveIdle()).isEqualTo(1));
    }

    @Test
    void abortsSurviveTheTripThroughStatusJsonAndSayWhenEachIsRetried() throws Exception {
        Instant at = RetirementMachineTest.T0;
        List<NextRetirement.Abort> aborts = List.of(
                new NextRetirement.Abort("prefill", 1, Reasons.DISAGGREGATED, "refused", at, Optional.empty()),
                new NextRetirement.Abort("server", 2, Reasons.BUSY, "busy", at, Optional.of("t1")));
        List<AbortedRetirement> written = RetirementRecords.toStatus(aborts, Duration.ofMinutes(5));
        List<AbortedRetirement> read = List.of(json.readValue(json.writeValueAsString(written), AbortedRetirement[].class));

        assertThat(read).extracting(AbortedRetirement::retryAt).containsExactly(null, "2026-01-01T00:05:00Z");
        assertThat(RetirementRecords.aborts(statusWith(read))).isEqualTo(aborts);
    }

    @Test
    void anAbortEditedIntoNonsenseHoldsNothingBack() {
        AbortedRetirement good = new AbortedRetirement("server", 2, Reasons.BUSY, "busy", "2026-01-01T00:00:00Z", null, null);
        List<AbortedRetirement> entries = List.of(good,
                new AbortedRetirement("server", null, Reasons.BUSY, "busy", "2026-01-01T00:00:00Z", null, null),
                new AbortedRetirement("server", 3, null, "busy", "2026-01-01T00:00:00Z", null, null),
                new AbortedRetirement("server", 4, Reasons.BUSY, "busy", "yesterday", null, null));

        assertThat(RetirementRecords.aborts(statusWith(entries))).extracting(NextRetirement.Abort::ordinal).containsExactly(2);
        assertThat(RetirementRecords.aborts(null)).isEmpty();
    }

    private static ModelDeploymentStatus statusWith(List<AbortedRetirement> aborted) {
        return new ModelDeploymentStatus(1L, "Ready", null, List.of(), null, null, aborted, List.of());
    }

    @Test
    void aStandingHoldIsKept() {
        Retirement held = RetirementMachine.begin("s", 1, "Surplus", RetirementMachineTest.TARGETS,
                new Classification.Held(Reasons.TAKE_OVER, "take-over"), Optional.empty(), RetirementMachineTest.T0).retirement();

        assertThat(RetirementRecords.fromStatus(RetirementRecords.toStatus(held, null, null))).contains(held);
    }

    @Test
    void aRecordEditedIntoNonsenseIsNotResumed() {
        RetirementStatus good = RetirementRecords.toStatus(RetirementMachineTest.draining(), null, null);
        List<RetirementStatus> broken = List.of(
                new RetirementStatus(good.roleName(), good.replicaOrdinal(), good.cause(), good.chosenBecause(), good.targetMembers(), good.answering(),
                        "Exploding", good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(good.roleName(), good.replicaOrdinal(), good.cause(), good.chosenBecause(), good.targetMembers(), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, "yesterday", good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(null, good.replicaOrdinal(), good.cause(), good.chosenBecause(), good.targetMembers(), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(good.roleName(), null, good.cause(), good.chosenBecause(), good.targetMembers(), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(good.roleName(), good.replicaOrdinal(), good.cause(), good.chosenBecause(),
                        List.of(new RetirementStatus.TargetMember("m", null, "c")), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null));

        assertThat(broken).allSatisfy(b -> assertThat(RetirementRecords.fromStatus(b)).isEmpty());
    }
}
