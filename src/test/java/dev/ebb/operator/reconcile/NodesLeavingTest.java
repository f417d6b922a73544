package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NodesLeavingTest {
    record Case(String name, Boolean unschedulable, List<Taint> taints, Optional<String> sign) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static Taint taint(String key, String effect) {
        return new Taint(effect, key, null, "1764892800");
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                        new Case("a node in service", null, null, Optional.empty()),
                        new Case("uncordoned", false, List.of(), Optional.empty()),
                        new Case(
                                "cordoned by kubectl drain",
                                true,
                                List.of(taint("node.kubernetes.io/unschedulable", "NoSchedule")),
                                Optional.of("cordoned")),
                        new Case(
                                "chosen by the cluster autoscaler",
                                null,
                                List.of(taint("ToBeDeletedByClusterAutoscaler", "NoSchedule")),
                                Optional.of("marked for removal by the cluster autoscaler")),
                        new Case(
                                "only a candidate of the cluster autoscaler",
                                null,
                                List.of(taint("DeletionCandidateOfClusterAutoscaler", "PreferNoSchedule")),
                                Optional.empty()),
                        new Case(
                                "disrupted by Karpenter",
                                null,
                                List.of(taint("karpenter.sh/disrupted", "NoSchedule")),
                                Optional.of("being disrupted by Karpenter")),
                        new Case(
                                "a taint of the user's",
                                null,
                                List.of(taint("nvidia.com/gpu", "NoSchedule")),
                                Optional.empty()))
                .map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aNodeIsGoingAwayOnlyOnTheSignsMaintenanceLeavesBeforeItEvicts(Case c) {
        Node node = new NodeBuilder()
                .withNewMetadata()
                .withName("n")
                .endMetadata()
                .withNewSpec()
                .withUnschedulable(c.unschedulable())
                .withTaints(c.taints())
                .endSpec()
                .build();

        assertThat(NodesLeaving.sign(node)).isEqualTo(c.sign());
    }

    @Test
    void aNodeWithoutASpecIsNotGoingAway() {
        assertThat(NodesLeaving.sign(new NodeBuilder()
                        .withNewMetadata()
                        .withName("n")
                        .endMetadata()
                        .build()))
                .isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theNodeCacheKeepsWhatTheSignsAreReadFromAndDropsTheStatus(Case c) {
        Node node = new NodeBuilder()
                .withNewMetadata()
                .withName("gpu-7")
                .withUid("u-7")
                .withResourceVersion("42")
                .withLabels(java.util.Map.of("nvidia.com/gpu.product", "H100"))
                .endMetadata()
                .withNewSpec()
                .withUnschedulable(c.unschedulable())
                .withTaints(c.taints())
                .withPodCIDR("10.244.7.0/24")
                .endSpec()
                .withNewStatus()
                .addNewImage()
                .withNames("vllm/vllm-openai:v0.32.0")
                .withSizeBytes(9_000_000_000L)
                .endImage()
                .endStatus()
                .build();
        NodesLeaving.Store store = new NodesLeaving.Store();

        store.put(store.getKey(node), node);

        Node kept = store.get("gpu-7");
        assertThat(NodesLeaving.sign(kept)).isEqualTo(NodesLeaving.sign(node));
        assertThat(kept.getStatus()).isNull();
        assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("42");
        assertThat(kept.getMetadata().getUid()).isEqualTo("u-7");
    }
}
