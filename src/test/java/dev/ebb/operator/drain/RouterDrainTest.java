package dev.ebb.operator.drain;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A leaving router Pod carries its streams as long as the engines behind it would, unless spec.router says otherwise. */
class RouterDrainTest {
    /**
     * @param roleDrains each role's retirement.drainSeconds, null for the default
     * @param routerDrain spec.router.drainSeconds, null when unset
     */
    record Case(String name, List<Integer> roleDrains, Integer routerDrain, int drain, int grace) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("one role at the default budget", List.of(-1), null, 240, 250),
                new Case("the longest role's budget", List.of(60, 900, -1), null, 900, 910),
                new Case("a short budget stays short", List.of(30), null, 30, 40),
                new Case("the router's own drain, shorter than the roles'", List.of(900), 45, 45, 55),
                new Case("the router's own drain, longer than the roles'", List.of(60), 86400, 86400, 86410));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theWindowFollowsTheRolesBudgetsOrTheRoutersOwn(Case c) {
        Specs.Deployment spec = deployment("qwen", "vLLM").router("vllm-router").routerDrainSeconds(c.routerDrain());
        for (int i = 0; i < c.roleDrains().size(); i++) {
            int budget = c.roleDrains().get(i);
            spec.role(budget < 0 ? role("r" + i) : role("r" + i).drainSeconds(budget));
        }

        RouterDrain window = RouterDrain.of(spec.desired());

        assertThat(window.settle())
                .as("the Service's endpoints drop the Pod meanwhile")
                .isEqualTo(DrainTimelines.SETTLE);
        assertThat(window.drain()).isEqualTo(c.drain());
        assertThat(window.grace()).isEqualTo(c.grace());
        assertThat(window.lastStreamBy())
                .as("no stream starts after the settle and the drain")
                .isEqualTo(5 + c.drain());
        assertThat(window.grace() - window.lastStreamBy())
                .as("left for the router's exit")
                .isEqualTo(RouterDrain.EXIT);
    }
}
