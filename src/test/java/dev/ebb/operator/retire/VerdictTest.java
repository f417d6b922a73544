package dev.ebb.operator.retire;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.read.Reading;
import dev.ebb.operator.retire.MemberReads.Verdict;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class VerdictTest {
    @Test
    void everyVerdictKeepsTheNameStatusCarries() {
        Map<Verdict, String> carried = Map.ofEntries(
                entry(Verdict.NONE, "None"),
                entry(Verdict.IDLE, "Idle"),
                entry(Verdict.BUSY, "Busy"),
                entry(Verdict.PARTIAL, "Partial"),
                entry(Verdict.FAILED, "Failed"),
                entry(Verdict.OPEN_CONNECTIONS, "OpenConnections"),
                entry(Verdict.CONTAINER_RESTARTED, "ContainerRestarted"),
                entry(Verdict.WITHDRAWAL_LOST, "WithdrawalLost"),
                entry(Verdict.AWAITING_PROPAGATION, "AwaitingPropagation"));

        assertThat(Arrays.stream(Verdict.values()).collect(Collectors.toMap(Function.identity(), Verdict::wire)))
                .isEqualTo(carried);
        assertThat(Verdict.values()).allSatisfy(v -> {
            assertThat(v).hasToString(v.wire());
            assertThat(Verdict.fromWire(v.wire())).contains(v);
        });
        assertThat(List.of("Exploding", "idle", "IDLE", ""))
                .allSatisfy(name -> assertThat(Verdict.fromWire(name)).isEmpty());
        assertThat(Verdict.fromWire(null)).isEmpty();
    }

    @Test
    void eachReadingHasItsVerdict() {
        assertThat(Verdict.of(new Reading.Idle())).isEqualTo(Verdict.IDLE);
        assertThat(Verdict.of(new Reading.Busy(3))).isEqualTo(Verdict.BUSY);
        assertThat(Verdict.of(new Reading.Partial(List.of("vllm:num_requests_waiting"))))
                .isEqualTo(Verdict.PARTIAL);
        assertThat(Verdict.of(new Reading.Failed("refused"))).isEqualTo(Verdict.FAILED);
    }

    @Test
    void onlyTheWithdrawalsMarksHoldTheReadsForTheMargin() {
        assertThat(Arrays.stream(Verdict.values()).filter(Verdict::marksMargin))
                .containsExactlyInAnyOrder(Verdict.WITHDRAWAL_LOST, Verdict.AWAITING_PROPAGATION);
    }
}
