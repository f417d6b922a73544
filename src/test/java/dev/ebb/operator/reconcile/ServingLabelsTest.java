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
import org.junit.jupiter.api.Test;

class ServingLabelsTest {
    private static final RetirementMachine MACHINE = new RetirementMachine();
    private static final Retirement DRAINING = RetirementMachineTest.draining();
    private static final String HELD = DRAINING.targets().get(0).name();

    private static Pod pod(String name, String serving, boolean leaving) {
        PodBuilder pod = new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withUid("uid-of-" + name)
                .endMetadata();
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
        assertThat(ServingLabels.toRestore(List.of(pod("a", "false", false), pod("b", "true", false)), List.of()))
                .containsExactly(new Member("a", "uid-of-a", null));
    }

    @Test
    void aPodWithoutTheServingLabelGetsItBack() {
        assertThat(ServingLabels.toRestore(List.of(pod("a", null, false)), List.of()))
                .extracting(Member::name)
                .containsExactly("a");
    }

    @Test
    void theMembersOfARetirementUnderWayStayWithdrawn() {
        List<Pod> pods = List.of(pod(HELD, "false", false), pod("other", "false", false));

        assertThat(ServingLabels.toRestore(pods, List.of(DRAINING)))
                .extracting(Member::name)
                .containsExactly("other");
    }

    @Test
    void theMembersOfAnAbortedRetirementServeAgain() {
        Retirement aborted =
                MACHINE.cancel(DRAINING, Instant.parse("2026-01-01T00:01:00Z")).retirement();

        assertThat(ServingLabels.toRestore(List.of(pod(HELD, "false", false)), List.of(aborted)))
                .extracting(Member::name)
                .containsExactly(HELD);
    }

    /** A member of replica {@code ordinal} of role "big". */
    private static Pod member(int ordinal, int member, String serving, boolean leaving) {
        return new PodBuilder(pod("qwen-big-r" + ordinal + "-m" + member, serving, leaving))
                .editMetadata()
                .addToLabels(Labels.ROLE, "big")
                .addToLabels(Labels.REPLICA, Integer.toString(ordinal))
                .addToLabels(Labels.MEMBER_INDEX, Integer.toString(member))
                .endMetadata()
                .build();
    }

    @Test
    void theRestOfAReplicaWhoseMemberTerminatesIsWithdrawnAndOtherReplicasServeOn() {
        List<Pod> pods = List.of(
                member(0, 0, "true", false),
                member(0, 1, "true", true),
                member(1, 0, "true", false),
                member(1, 1, "true", false));

        assertThat(ServingLabels.toWithdraw(pods, List.of()))
                .extracting(Member::name)
                .containsExactly("qwen-big-r0-m0");
        assertThat(ServingLabels.toRestore(pods, List.of())).isEmpty();
    }

    @Test
    void aReplicaLosingAMemberStaysWithdrawnAndServesAgainOnceNoMemberTerminates() {
        List<Pod> losing = List.of(member(0, 0, "false", false), member(0, 1, "true", true));
        List<Pod> whole = List.of(member(0, 0, "false", false), member(0, 1, "true", false));

        assertThat(ServingLabels.toWithdraw(losing, List.of())).isEmpty();
        assertThat(ServingLabels.toRestore(losing, List.of())).isEmpty();
        assertThat(ServingLabels.toRestore(whole, List.of()))
                .extracting(Member::name)
                .containsExactly("qwen-big-r0-m0");
    }

    @Test
    void aReplicaARetirementHoldsIsLeftToItEvenWhileAMemberTerminates() {
        Pod held = new PodBuilder(member(0, 0, "true", false))
                .editMetadata()
                .withName(HELD)
                .endMetadata()
                .build();
        List<Pod> pods = List.of(held, member(0, 1, "true", true));

        assertThat(ServingLabels.toWithdraw(pods, List.of(DRAINING))).isEmpty();
        assertThat(ServingLabels.toWithdraw(pods, List.of()))
                .extracting(Member::name)
                .containsExactly(HELD);
    }

    @Test
    void aPodWithoutReplicaLabelsIsNeverTakenForAMemberOfAnother() {
        List<Pod> pods = List.of(pod("a", "true", false), pod("b", "true", true));

        assertThat(ServingLabels.toWithdraw(pods, List.of())).isEmpty();
    }

    @Test
    void aPodOnItsWayOutIsLeftToGo() {
        assertThat(ServingLabels.toRestore(List.of(pod("a", "false", true)), List.of()))
                .isEmpty();
    }
}
