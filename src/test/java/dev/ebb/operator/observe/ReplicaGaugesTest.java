package dev.ebb.operator.observe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.RoleStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReplicaGaugesTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ReplicaGauges gauges = new ReplicaGauges(registry);

    private static RoleStatus role(String name, int desired, int current, int ready, int updated) {
        return new RoleStatus(name, "Server", desired, current, ready, updated, false, 0, 0, 0, 0, null);
    }

    private double value(String deployment, String role, String state) {
        return registry.get(Metrics.REPLICAS)
                .tags(Metrics.DEPLOYMENT, deployment, Metrics.ROLE, role, Metrics.STATE, state)
                .gauge()
                .value();
    }

    @Test
    void eachDeploymentsRolesAreCountedByStateAndGoWithTheirDeployment() {
        gauges.record("a", "qwen", List.of(role("server", 3, 4, 2, 1)));
        gauges.record("a", "llama", List.of(role("server", 1, 1, 1, 1)));

        assertThat(value("qwen", "server", "desired")).isEqualTo(3);
        assertThat(value("qwen", "server", "current")).isEqualTo(4);
        assertThat(value("qwen", "server", "ready")).isEqualTo(2);
        assertThat(value("qwen", "server", "updated")).isEqualTo(1);
        assertThat(value("llama", "server", "desired")).isEqualTo(1);

        gauges.record("a", "qwen", List.of(role("server", 1, 1, 1, 1)));
        assertThat(value("qwen", "server", "current")).isEqualTo(1);

        gauges.forget("a", "qwen");
        assertThat(registry.find(Metrics.REPLICAS)
                        .tag(Metrics.DEPLOYMENT, "qwen")
                        .gauges())
                .isEmpty();
        assertThat(value("llama", "server", "ready")).isEqualTo(1);
    }

    @Test
    void aRoleNoLongerInTheStatusLosesItsSeriesAndTheOtherRolesKeepTheirs() {
        gauges.record("a", "qwen", List.of(role("prefill", 2, 2, 2, 2), role("decode", 4, 4, 3, 4)));

        gauges.record("a", "qwen", List.of(role("decode", 5, 4, 4, 4)));

        assertThat(registry.find(Metrics.REPLICAS).tag(Metrics.ROLE, "prefill").gauges())
                .isEmpty();
        assertThat(registry.find(Metrics.REPLICAS).tag(Metrics.ROLE, "decode").gauges())
                .hasSize(4);
        assertThat(value("qwen", "decode", "desired")).isEqualTo(5);
        assertThat(value("qwen", "decode", "ready")).isEqualTo(4);
    }

    @Test
    void theSameDeploymentNameInTwoNamespacesIsTwoSetsOfSeries() {
        gauges.record("a", "qwen", List.of(role("server", 1, 1, 1, 1)));
        gauges.record("b", "qwen", List.of(role("server", 3, 3, 3, 3)));

        gauges.forget("a", "qwen");

        assertThat(registry.find(Metrics.REPLICAS).tag(Metrics.NAMESPACE, "a").gauges())
                .isEmpty();
        assertThat(registry.get(Metrics.REPLICAS)
                        .tags(Metrics.NAMESPACE, "b", Metrics.STATE, "desired")
                        .gauge()
                        .value())
                .isEqualTo(3);
    }
}
