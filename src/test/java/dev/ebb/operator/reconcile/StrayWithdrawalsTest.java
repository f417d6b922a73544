package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.retire.Member;
import dev.ebb.operator.retire.Retirement;
import dev.ebb.operator.retire.RetirementMachine;
import dev.ebb.operator.retire.RetirementMachineTest;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StrayWithdrawalsTest {
    private static final RetirementMachine MACHINE = new RetirementMachine();
    private static final Retirement DRAINING = RetirementMachineTest.draining();
    private static final String HELD = DRAINING.targets().get(0).name();

    private static Pod pod(String name, String serving, boolean leaving) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withUid("uid-of-" + name).endMetadata();
        if (serving != null) {
            pod.editMetadata().addToLabels(Labels.SERVING, serving).endMetadata();
        }
        if (leaving) {
            pod.editMetadata().withDeletionTimestamp("2026-01-01T00:00:00Z").endMetadata();
        }
        return pod.build();
    }

    @Test
    void aWithdrawnPodThatNoRetirementHoldsServesAgain() {
        assertThat(StrayWithdrawals.among(List.of(pod("a", "false", false), pod("b", "true", false)), List.of()))
                .containsExactly(new Member("a", "uid-of-a", null));
    }

    @Test
    void aPodWithoutTheServingLabelGetsItBack() {
        assertThat(StrayWithdrawals.among(List.of(pod("a", null, false)), List.of())).extracting(Member::name).containsExactly("a");
    }

    @Test
    void theMembersOfARetirementUnderWayStayWithdrawn() {
        List<Pod> pods = List.of(pod(HELD, "false", false), pod("other", "false", false));

        assertThat(StrayWithdrawals.among(pods, List.of(DRAINING))).extracting(Member::name).containsExactly("other");
    }

    @Test
    void theMembersOfAnAbortedRetirementServeAgain() {
        Retirement aborted = MACHINE.cancel(DRAINING, Instant.parse("2026-01-01T00:01:00Z")).retirement();

        assertThat(StrayWithdrawals.among(List.of(pod(HELD, "false", false)), List.of(aborted))).extracting(Member::name).containsExactly(HELD);
    }

    @Test
    void aPodOnItsWayOutIsLeftToGo() {
        assertThat(StrayWithdrawals.among(List.of(pod("a", "false", true)), List.of())).isEmpty();
    }
}
