package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DisruptionBudgetsTest {
    /**
     * @param rolePods the role's Pods that exist
     * @param minAvailable what the budget keeps
     * @param servingOnly whether only serving Pods are covered
     */
    record Case(String name, Specs.Role role, int rolePods, int minAvailable, boolean servingOnly, String unhealthy) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                        new Case(
                                "protocol: every Pod stays",
                                role("server").replicas(4),
                                4,
                                4,
                                false,
                                "IfHealthyBudget"),
                        new Case(
                                "protocol: a surge's Pod counted before it exists",
                                role("server").replicas(4).maxSurge(1),
                                4,
                                5,
                                false,
                                "IfHealthyBudget"),
                        new Case(
                                "protocol: a scale-down's leaving Pods counted",
                                role("server").replicas(2),
                                5,
                                5,
                                false,
                                "IfHealthyBudget"),
                        new Case(
                                "protocol: Pods of a replica of two",
                                role("server").replicas(3).size(2),
                                6,
                                6,
                                false,
                                "IfHealthyBudget"),
                        new Case(
                                "evict: one replica",
                                role("server").replicas(4).disruption(null, "Evict"),
                                4,
                                3,
                                true,
                                "AlwaysAllow"),
                        new Case(
                                "evict: two replicas",
                                role("server").replicas(4).disruption(2, "Evict"),
                                4,
                                2,
                                true,
                                "AlwaysAllow"),
                        new Case(
                                "evict: one Pod of replicas of two, so no second replica breaks",
                                role("server").replicas(3).size(2).disruption(1, "Evict"),
                                6,
                                5,
                                true,
                                "AlwaysAllow"),
                        new Case(
                                "evict: more than there are",
                                role("server").replicas(1).disruption(3, "Evict"),
                                1,
                                0,
                                true,
                                "AlwaysAllow"),
                        new Case(
                                "evict: none",
                                role("server").replicas(2).disruption(0, "Evict"),
                                2,
                                2,
                                true,
                                "AlwaysAllow"))
                .map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void eachRoleGetsABudgetInPodsOverItsOwnPods(Case c) {
        DesiredDeployment d = deployment("qwen", "vLLM").role(c.role()).desired();

        PodDisruptionBudget budget = DisruptionBudgets.of(d, d.roles().get(0), c.rolePods());

        assertThat(budget.getMetadata().getName()).isEqualTo("qwen-server");
        assertThat(budget.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getName()).isEqualTo("qwen"));
        assertThat(budget.getSpec().getMinAvailable().getIntVal()).isEqualTo(c.minAvailable());
        assertThat(budget.getSpec().getMaxUnavailable())
                .as("a percentage or maxUnavailable would ask the ModelDeployment's scale")
                .isNull();
        Map<String, String> role = Map.of(Labels.DEPLOYMENT, "qwen", Labels.ROLE, "server");
        assertThat(budget.getSpec().getSelector().getMatchLabels())
                .containsAllEntriesOf(role)
                .hasSize(c.servingOnly() ? 3 : 2);
        if (c.servingOnly()) {
            assertThat(budget.getSpec().getSelector().getMatchLabels())
                    .containsEntry(Labels.SERVING, Labels.SERVING_YES);
        }
        assertThat(budget.getSpec().getUnhealthyPodEvictionPolicy()).isEqualTo(c.unhealthy());
    }
}
