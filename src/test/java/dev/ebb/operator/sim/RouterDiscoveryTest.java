package dev.ebb.operator.sim;

import static dev.ebb.operator.api.v1alpha1.RouterKind.LLM_D_ROUTER;
import static dev.ebb.operator.api.v1alpha1.RouterKind.SGLANG_GATEWAY;
import static dev.ebb.operator.api.v1alpha1.RouterKind.VLLM_ROUTER;
import static dev.ebb.operator.sim.RouterDiscovery.Decision.DROP;
import static dev.ebb.operator.sim.RouterDiscovery.Decision.NONE;
import static dev.ebb.operator.sim.RouterDiscovery.Decision.ROUTE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RouterDiscoveryTest {
    private static final Map<String, String> SELECTOR = Map.of("app", "x", "serving", "true");

    private static Pod serving() {
        return new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withUid("u1")
                .withLabels(Map.of("app", "x", "serving", "true"))
                .endMetadata()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP("10.0.0.7")
                .addNewCondition()
                .withType("Ready")
                .withStatus("True")
                .endCondition()
                .addNewContainerStatus()
                .withName("main")
                .withReady(true)
                .endContainerStatus()
                .endStatus()
                .build();
    }

    private static final UnaryOperator<Pod> DELETING = p -> new PodBuilder(p)
            .editMetadata()
            .withDeletionTimestamp("2026-11-30T16:00:00Z")
            .endMetadata()
            .build();
    private static final UnaryOperator<Pod> NOT_READY = p -> new PodBuilder(p)
            .editStatus()
            .withConditions(List.of())
            .addNewCondition()
            .withType("Ready")
            .withStatus("False")
            .endCondition()
            .editFirstContainerStatus()
            .withReady(false)
            .endContainerStatus()
            .endStatus()
            .build();
    private static final UnaryOperator<Pod> WITHDRAWN = p -> new PodBuilder(p)
            .editMetadata()
            .addToLabels("serving", "false")
            .endMetadata()
            .build();
    private static final UnaryOperator<Pod> NO_ADDRESS =
            p -> new PodBuilder(p).editStatus().withPodIP(null).endStatus().build();
    private static final UnaryOperator<Pod> NO_CONTAINER_STATUSES = p -> new PodBuilder(p)
            .editStatus()
            .withContainerStatuses(List.of())
            .endStatus()
            .build();
    private static final UnaryOperator<Pod> NO_STATUS =
            p -> new PodBuilder(p).withStatus(null).build();
    private static final UnaryOperator<Pod> NO_LABELS =
            p -> new PodBuilder(p).editMetadata().withLabels(null).endMetadata().build();

    /** A change to a Pod the router routes to, and what each release does about it. */
    static Stream<Arguments> changes() {
        return Stream.of(
                Arguments.of("deletion timestamp", DELETING, DROP, DROP, DROP),
                Arguments.of("NotReady", NOT_READY, DROP, DROP, NONE),
                Arguments.of("label mismatch", WITHDRAWN, DROP, DROP, NONE),
                Arguments.of("labels gone", NO_LABELS, DROP, DROP, NONE),
                Arguments.of("no container statuses", NO_CONTAINER_STATUSES, ROUTE, DROP, NONE),
                // vLLM's router and smg skip a Pod without an address; llm-d holds no endpoint it cannot reach
                Arguments.of("address gone", NO_ADDRESS, DROP, NONE, NONE),
                Arguments.of("status gone", NO_STATUS, DROP, NONE, NONE),
                Arguments.of("nothing that matters", UnaryOperator.<Pod>identity(), ROUTE, ROUTE, NONE));
    }

    @ParameterizedTest(name = "{0}: llm-d {2}, vLLM router {3}, smg {4}")
    @MethodSource("changes")
    void aChangeToAPodTheRouterRoutesTo(
            String what,
            UnaryOperator<Pod> change,
            RouterDiscovery.Decision llmD,
            RouterDiscovery.Decision vllm,
            RouterDiscovery.Decision smg) {
        Pod before = serving();
        Pod after = change.apply(serving());

        assertThat(RouterDiscovery.onEvent(LLM_D_ROUTER, SELECTOR, before, after, true))
                .isEqualTo(llmD);
        assertThat(RouterDiscovery.onEvent(VLLM_ROUTER, SELECTOR, before, after, true))
                .isEqualTo(vllm);
        assertThat(RouterDiscovery.onEvent(SGLANG_GATEWAY, SELECTOR, before, after, true))
                .isEqualTo(smg);
    }

    @Test
    void aPodGoneFromTheApiIsDroppedByAllButSmgWhoseWatcherSkipsDeletions() {
        assertThat(RouterDiscovery.onEvent(LLM_D_ROUTER, SELECTOR, serving(), null, true))
                .isEqualTo(DROP);
        assertThat(RouterDiscovery.onEvent(VLLM_ROUTER, SELECTOR, serving(), null, true))
                .isEqualTo(DROP);
        assertThat(RouterDiscovery.onEvent(SGLANG_GATEWAY, SELECTOR, serving(), null, true))
                .isEqualTo(NONE);
    }

    @Test
    void aNewServingPodIsRoutedToByEveryRouter() {
        for (RouterKind kind : RouterKind.values()) {
            assertThat(RouterDiscovery.onEvent(kind, SELECTOR, null, serving(), false))
                    .as(kind.name())
                    .isEqualTo(ROUTE);
        }
    }

    @Test
    void smgAddsAPodOnlyOnceItIsHealthyAndUntracked() {
        assertThat(RouterDiscovery.onEvent(SGLANG_GATEWAY, SELECTOR, null, NOT_READY.apply(serving()), false))
                .isEqualTo(NONE);
        assertThat(RouterDiscovery.onEvent(SGLANG_GATEWAY, SELECTOR, NOT_READY.apply(serving()), serving(), false))
                .isEqualTo(ROUTE);
        Pod withoutUid = new PodBuilder(serving())
                .editMetadata()
                .withUid(null)
                .endMetadata()
                .build();
        assertThat(RouterDiscovery.onEvent(SGLANG_GATEWAY, SELECTOR, null, withoutUid, false))
                .isEqualTo(NONE);
    }

    @Test
    void aWithdrawnPodThatMatchesAgainComesBackAsAdded() {
        assertThat(RouterDiscovery.asSelectorWatchSees(SELECTOR, WITHDRAWN.apply(serving()), serving()))
                .contains(RouterDiscovery.Event.ADDED);
        assertThat(RouterDiscovery.asSelectorWatchSees(SELECTOR, serving(), WITHDRAWN.apply(serving())))
                .contains(RouterDiscovery.Event.DELETED);
        assertThat(RouterDiscovery.asSelectorWatchSees(
                        SELECTOR, WITHDRAWN.apply(serving()), WITHDRAWN.apply(serving())))
                .isEmpty();
    }

    @Test
    void smgReconcileDropsWhatLeftItsSelectorOrWasReplacedAndAddsHealthyPodsItMissed() {
        Pod withdrawn = new PodBuilder(WITHDRAWN.apply(serving()))
                .editMetadata()
                .withName("gone-by-label")
                .endMetadata()
                .build();
        Pod notReady = new PodBuilder(NOT_READY.apply(serving()))
                .editMetadata()
                .withName("not-ready")
                .endMetadata()
                .build();
        Pod replaced = new PodBuilder(serving())
                .editMetadata()
                .withName("replaced")
                .withUid("u2")
                .endMetadata()
                .build();
        Pod missed = new PodBuilder(serving())
                .editMetadata()
                .withName("missed")
                .endMetadata()
                .build();
        Pod missedNotReady = new PodBuilder(NOT_READY.apply(serving()))
                .editMetadata()
                .withName("missed-not-ready")
                .endMetadata()
                .build();

        RouterDiscovery.Reconciled diff = RouterDiscovery.smgReconcile(
                SELECTOR,
                Map.of("gone-by-label", "u1", "not-ready", "u1", "replaced", "u1", "deleted", "u1"),
                List.of(withdrawn, notReady, replaced, missed, missedNotReady));

        assertThat(diff.stale()).containsExactlyInAnyOrder("gone-by-label", "replaced", "deleted");
        assertThat(diff.missing()).containsExactlyInAnyOrder("replaced", "missed");
    }
}
