package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.DesiredDeployment;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import org.junit.jupiter.api.Test;

class SurplusChoiceTest {
    private final DesiredDeployment d = deployment("q", "vLLM").role(role("s").size(2)).desired();

    private List<Pod> replica(int ordinal, boolean ran) {
        List<Pod> pods = new ArrayList<>();
        for (Pod pod : ObservedPods.replica(d, "s", ordinal, "h", ran)) {
            pods.add(ran ? new PodBuilder(pod).editStatus().withContainerStatuses(new ContainerStatusBuilder().withName("main")
                    .withContainerID("containerd://" + ordinal).withRestartCount(0).build()).endStatus().build()
                    : new PodBuilder(pod).withNewStatus().withPhase("Pending").endStatus().build());
        }
        return pods;
    }

    private NavigableMap<Integer, ObservedReplica> replicas(List<Pod> pods) {
        return Inventory.of(pods).replicas("s");
    }

    @Test
    void nothingLeavesWhileTheRoleHasWhatItShould() {
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.addAll(replica(1, true));

        assertThat(SurplusChoice.next(replicas(pods), 2)).isEmpty();
        assertThat(SurplusChoice.next(replicas(pods), 3)).isEmpty();
    }

    @Test
    void highestOrdinalLeavesThroughTheProtocol() {
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.addAll(replica(3, true));
        pods.addAll(replica(1, true));

        assertThat(SurplusChoice.next(replicas(pods), 2)).hasValueSatisfying(r -> {
            assertThat(r.replica().ordinal()).isEqualTo(3);
            assertThat(r.direct()).isFalse();
        });
    }

    @Test
    void replicaThatNeverRanLeavesFirstAndDirectly() {
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.addAll(replica(1, false));
        pods.addAll(replica(2, true));

        assertThat(SurplusChoice.next(replicas(pods), 2)).hasValueSatisfying(r -> {
            assertThat(r.replica().ordinal()).isEqualTo(1);
            assertThat(r.direct()).isTrue();
        });
    }

    @Test
    void restartedContainerCountsAsHavingRun() {
        Pod crashed = new PodBuilder(replica(1, false).get(0)).editStatus().withContainerStatuses(new ContainerStatusBuilder()
                .withName("main").withRestartCount(3).build()).endStatus().build();
        List<Pod> pods = new ArrayList<>(replica(0, true));
        pods.add(crashed);
        pods.add(replica(1, false).get(1));

        assertThat(SurplusChoice.next(replicas(pods), 1)).hasValueSatisfying(r -> assertThat(r.direct()).isFalse());
    }
}
