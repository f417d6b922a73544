package dev.ebb.operator.retire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.read.Reading;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RetirementRecordsTest {
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void aDrainingRetirementSurvivesTheTripThroughStatusJson() throws Exception {
        Retirement draining = RetirementMachine.step(RetirementMachineTest.draining(),
                RetirementMachineTest.reads(RetirementMachineTest.at(3), new Reading.Idle())).retirement();

        String written = json.writeValueAsString(RetirementRecords.toStatus(draining, "t1"));
        RetirementStatus read = json.readValue(written, RetirementStatus.class);

        assertThat(RetirementRecords.fromStatus(read)).contains(draining);
        assertThat(read.deadline()).isEqualTo("2026-01-01T00:05:00Z");
        assertThat(read.state()).isEqualTo("Draining");
        assertThat(read.retryToken()).isEqualTo("t1");
        assertThat(read.reads()).singleElement().satisfies(r -> assertThat(r.consecutiveIdle()).isEqualTo(1));
    }

    @Test
    void aStandingHoldIsKept() {
        Retirement held = RetirementMachine.begin("s", 1, "Surplus", RetirementMachineTest.TARGETS,
                new Classification.Held(Reasons.TAKE_OVER, "take-over"), Optional.empty(), RetirementMachineTest.T0).retirement();

        assertThat(RetirementRecords.fromStatus(RetirementRecords.toStatus(held, null))).contains(held);
    }

    @Test
    void aRecordEditedIntoNonsenseIsNotResumed() {
        RetirementStatus good = RetirementRecords.toStatus(RetirementMachineTest.draining(), null);
        List<RetirementStatus> broken = List.of(
                new RetirementStatus(good.roleName(), good.replicaOrdinal(), good.cause(), good.targetMembers(), good.answering(),
                        "Exploding", good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(good.roleName(), good.replicaOrdinal(), good.cause(), good.targetMembers(), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, "yesterday", good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(null, good.replicaOrdinal(), good.cause(), good.targetMembers(), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(good.roleName(), null, good.cause(), good.targetMembers(), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null),
                new RetirementStatus(good.roleName(), good.replicaOrdinal(), good.cause(),
                        List.of(new RetirementStatus.TargetMember("m", null, "c")), good.answering(),
                        good.state(), good.reason(), good.message(), null, null, good.startedAt(), good.phaseStartedAt(), good.deadline(), good.reads(), good.dispatchBaseline(), null));

        assertThat(broken).allSatisfy(b -> assertThat(RetirementRecords.fromStatus(b)).isEmpty());
    }
}
