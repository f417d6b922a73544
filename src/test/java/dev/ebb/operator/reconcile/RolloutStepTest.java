package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** One replica at a time, never while one is leaving or its replacement is not Ready, only over the replicas that stay. */
class RolloutStepTest {
    private static final PodRenderer RENDERER = new PodRenderer();
    private static final DesiredDeployment D =
            deployment("q", "vLLM").role(role("s").size(2)).desired();
    private static final String NEW = "new";
    private static final String OLD = "old";

    /** A replica: its configuration, whether Ready, whether its Pods are being deleted. */
    private record R(int ordinal, String hash, boolean ready, boolean leaving) {
        List<Pod> pods() {
            List<Pod> pods = new ArrayList<>();
            for (Pod pod : ObservedPods.replica(D, "s", ordinal, hash, ready)) {
                pods.add(
                        leaving
                                ? new PodBuilder(pod)
                                        .editMetadata()
                                        .withDeletionTimestamp("2026-01-01T00:00:00Z")
                                        .endMetadata()
                                        .build()
                                : pod);
            }
            return pods;
        }
    }

    private static R r(int ordinal, String hash) {
        return new R(ordinal, hash, true, false);
    }

    private static Arguments row(String name, List<R> replicas, int desired, Integer expected) {
        return Arguments.of(name, replicas, desired, Set.of(), Set.of(), expected);
    }

    static Stream<Arguments> table() {
        return Stream.of(
                row("all at the new configuration: nothing to do", List.of(r(0, NEW), r(1, NEW)), 2, null),
                row("all Ready: the highest old ordinal goes", List.of(r(0, OLD), r(1, OLD), r(2, OLD)), 3, 2),
                row(
                        "an old replica that is not Ready goes first",
                        List.of(r(0, OLD), new R(1, OLD, false, false), r(2, OLD)),
                        3,
                        1),
                row(
                        "a replica is leaving: wait until it is gone",
                        List.of(r(0, OLD), r(1, OLD), new R(2, OLD, true, true)),
                        3,
                        null),
                row(
                        "the replacement is not Ready yet: wait",
                        List.of(r(0, OLD), r(1, OLD), new R(2, NEW, false, false)),
                        3,
                        null),
                row("the replacement is Ready: the next old one goes", List.of(r(0, OLD), r(1, OLD), r(2, NEW)), 3, 1),
                row("a replica short (its replacement not created yet): wait", List.of(r(0, OLD), r(1, OLD)), 3, null),
                row(
                        "more than the spec asks: the rollout goes over the replicas that stay",
                        List.of(r(0, OLD), r(1, OLD), r(2, OLD)),
                        2,
                        1),
                Arguments.of(
                        "the retirement under way stays the answer while its Pods terminate",
                        List.of(r(0, OLD), r(1, OLD), new R(2, OLD, true, true)),
                        3,
                        Set.of(2),
                        Set.of(),
                        2),
                Arguments.of(
                        "the retirement under way stays the answer even when another is not Ready",
                        List.of(r(0, OLD), new R(1, OLD, false, false), r(2, OLD)),
                        3,
                        Set.of(2),
                        Set.of(),
                        2),
                Arguments.of(
                        "an aborted one not yet to be retried is passed over: the next goes",
                        List.of(r(0, OLD), r(1, OLD), r(2, OLD)),
                        3,
                        Set.of(),
                        Set.of(2),
                        1),
                Arguments.of(
                        "every old one waits: nothing goes",
                        List.of(r(0, NEW), r(1, OLD), r(2, OLD)),
                        3,
                        Set.of(),
                        Set.of(1, 2),
                        null),
                Arguments.of(
                        "with a surge the role keeps one more: the old one goes once the extra one is Ready",
                        List.of(r(0, OLD), r(1, OLD), r(2, NEW)),
                        3,
                        Set.of(),
                        Set.of(),
                        1),
                Arguments.of(
                        "with a surge and the extra one not created yet: wait",
                        List.of(r(0, OLD), r(1, OLD)),
                        3,
                        Set.of(),
                        Set.of(),
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void decides(
            String row, List<R> replicas, int desired, Set<Integer> retiring, Set<Integer> waiting, Integer expected) {
        List<Pod> pods = new ArrayList<>();
        replicas.forEach(r -> pods.addAll(r.pods()));

        NavigableMap<Integer, ObservedReplica> all = Inventory.of(pods).replicas("s");
        NavigableMap<Integer, ObservedReplica> staying = SurplusChoice.split(
                        all, desired, Set.of(), NEW, SurplusChoiceTest.allIdle(all), true)
                .staying();

        Optional<ObservedReplica> next =
                RolloutStep.next(all, staying, desired, RolloutStep.atHash(NEW), retiring, waiting, false);

        assertThat(next.map(ObservedReplica::ordinal)).isEqualTo(Optional.ofNullable(expected));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sameRender")
    void editsThatRenderTheSamePodsTurnNothingOver(String edit, DesiredDeployment before, DesiredDeployment after) {
        DesiredRole b = before.roles().get(0);
        DesiredRole a = after.roles().get(0);

        assertThat(RENDERER.configHash(after, a)).isEqualTo(RENDERER.configHash(before, b));
    }

    static Stream<Arguments> sameRender() {
        return Stream.of(
                Arguments.of(
                        "grace 30 written onto a role that set none",
                        deployment("q", "vLLM").role(role("s")).desired(),
                        deployment("q", "vLLM").role(role("s").grace(30)).desired()),
                Arguments.of(
                        "only replicas changed",
                        deployment("q", "vLLM").role(role("s").replicas(2)).desired(),
                        deployment("q", "vLLM").role(role("s").replicas(5)).desired()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("newRender")
    void editsThatChangeThePodsTurnReplicasOver(String edit, DesiredDeployment before, DesiredDeployment after) {
        assertThat(RENDERER.configHash(after, after.roles().get(0)))
                .isNotEqualTo(RENDERER.configHash(before, before.roles().get(0)));
    }

    static Stream<Arguments> newRender() {
        return Stream.of(
                Arguments.of(
                        "a new grace",
                        deployment("q", "vLLM").role(role("s")).desired(),
                        deployment("q", "vLLM").role(role("s").grace(60)).desired()),
                Arguments.of(
                        "a new image",
                        deployment("q", "vLLM").role(role("s")).desired(),
                        deployment("q", "vLLM")
                                .role(role("s").image("vllm/vllm-openai:v0.12.0"))
                                .desired()));
    }
}
