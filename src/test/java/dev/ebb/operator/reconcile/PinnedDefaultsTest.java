package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class PinnedDefaultsTest {
    private static final PodRenderer RENDERER = new PodRenderer();
    private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");
    /** The default the test resolver gives vLLM roles that name no image (see {@link Specs#RESOLVER}). */
    private static final String DEFAULT = "default/vLLM:test";

    private static Map<String, String> hashes(DesiredDeployment d) {
        return d.roles().stream().collect(Collectors.toMap(DesiredRole::name, r -> RENDERER.configHash(d, r)));
    }

    /** Three replicas as the operator created them while the role took the default image. */
    private static List<Pod> onTheDefault() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();
        return IntStream.range(0, 3)
                .boxed()
                .flatMap(o -> ObservedPods.replica(d, "server", o, hashes(d).get("server"), true).stream())
                .toList();
    }

    private static ReplicaPlan planFor(DesiredDeployment d, List<Pod> pods) {
        Inventory seen = Inventory.of(PinnedDefaults.seenAtTheirRolesHash(pods, d, hashes(d), RENDERER));
        return ReplicaPlanner.plan(
                RENDERER,
                d,
                hashes(d),
                seen,
                List.of("qwen-server"),
                new ReplicaPlanner.Retirements(Map.of(), Map.of(), Map.of(), Map.of(), false, false, Map.of(), NOW));
    }

    @Test
    void pinningTheDefaultImageThatRunsRestartsNothing() {
        DesiredDeployment pinned = deployment("qwen", "vLLM")
                .role(role("server").replicas(3).image(DEFAULT))
                .desired();

        ReplicaPlan plan = planFor(pinned, onTheDefault());

        assertThat(plan.retirements()).isEmpty();
        assertThat(plan.later()).isEmpty();
        assertThat(plan.create()).isEmpty();
        assertThat(PinnedDefaults.seenAtTheirRolesHash(onTheDefault(), pinned, hashes(pinned), RENDERER))
                .allSatisfy(p -> assertThat(p.getMetadata().getLabels())
                        .containsEntry(Labels.CONFIG_HASH, hashes(pinned).get("server")));
    }

    @Test
    void namingAnotherImageRollsOutAsAnyImageEditDoes() {
        DesiredDeployment other = deployment("qwen", "vLLM")
                .role(role("server").replicas(3).image("vllm/vllm-openai:v0.12.0"))
                .desired();

        ReplicaPlan plan = planFor(other, onTheDefault());

        assertThat(plan.retirements())
                .singleElement()
                .satisfies(c -> assertThat(c.ordinal()).isEqualTo(2));
        assertThat(plan.later()).hasSize(2);
    }

    @Test
    void aRoleThatStillTakesTheDefaultSeesItsPodsAsTheyAre() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").replicas(3)).desired();
        List<Pod> pods = onTheDefault();

        assertThat(PinnedDefaults.seenAtTheirRolesHash(pods, d, hashes(d), RENDERER))
                .isEqualTo(pods);
    }
}
