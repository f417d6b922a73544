package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PartlyScheduledTest {
    private static final String FULL = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available.";

    private static Pod member(int ordinal, int member, String node, String schedulerSays) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName("big-tp-r" + ordinal + "-m" + member).withUid("u" + ordinal + member)
                .withLabels(Map.of(Labels.ROLE, "tp", Labels.REPLICA, Integer.toString(ordinal), Labels.MEMBER_INDEX, Integer.toString(member)))
                .endMetadata().withNewSpec().withNodeName(node).endSpec();
        if (schedulerSays != null) {
            pod.withNewStatus().addNewCondition().withType("PodScheduled").withStatus("False").withReason("Unschedulable")
                    .withMessage(schedulerSays).endCondition().endStatus();
        }
        return pod.build();
    }

    @Test
    void aReplicaWithPlacedAndUnplaceableMembersIsToldWithWhatTheSchedulerSaid() {
        List<PartlyScheduled.Replica> told = PartlyScheduled.among(List.of(member(0, 0, "gpu-a", null), member(0, 1, null, FULL),
                member(1, 0, "gpu-b", null), member(1, 1, "gpu-c", null)));

        assertThat(told).singleElement().satisfies(r -> {
            assertThat(r.message()).isEqualTo("replica 0 of role tp is partly scheduled: big-tp-r0-m0 on gpu-a hold their nodes' accelerators"
                    + " while big-tp-r0-m1 cannot be placed (" + FULL + "); the replica serves nothing until every member is placed. A gang"
                    + " scheduler places a replica whole");
            assertThat(r.key()).isEqualTo("u01");
        });
    }

    @Test
    void aReplicaNoneOfWhoseMembersIsPlacedHoldsNothingAndIsNotTold() {
        assertThat(PartlyScheduled.among(List.of(member(0, 0, null, FULL), member(0, 1, null, FULL)))).isEmpty();
    }

    @Test
    void aMemberMerelyNotYetLookedAtBySchedulerIsNotTold() {
        assertThat(PartlyScheduled.among(List.of(member(0, 0, "gpu-a", null), member(0, 1, null, null)))).isEmpty();
    }

    @Test
    void whatTheSchedulerSaysIsShownOnOneBoundedLine() {
        String hostile = "line one\nline two\u0007" + "x".repeat(10_000);

        String message = PartlyScheduled.among(List.of(member(0, 0, "gpu-a", null), member(0, 1, null, hostile))).get(0).message();

        assertThat(message).doesNotContain("\n").doesNotContain("\u0007").contains("line one line two");
        assertThat(message.length()).isLessThan(600);
    }

    @Test
    void podsWithoutTheOperatorsLabelsAreLeftOut() {
        Pod stranger = new PodBuilder(member(0, 1, null, FULL)).editMetadata().withLabels(Map.of(Labels.REPLICA, "zero")).endMetadata().build();

        assertThat(PartlyScheduled.among(List.of(member(0, 0, "gpu-a", null), stranger))).isEmpty();
    }
}
