package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class StatusNewsTest {
    private static final PodRenderer RENDERER = new PodRenderer();
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static ModelDeploymentStatus status(DesiredDeployment d, ModelDeploymentStatus before) {
        Map<String, String> hashes =
                d.roles().stream().collect(Collectors.toMap(DesiredRole::name, r -> RENDERER.configHash(d, r)));
        return StatusAggregator.accepted(
                RENDERER,
                1,
                d,
                hashes,
                Inventory.of(List.of()),
                Optional.empty(),
                List.of(),
                List.of(),
                List.of(),
                before == null ? List.of() : before.conditions(),
                T0);
    }

    @Test
    void firstStatusTellsEachConditionAndEachDrainWarningOnce() {
        DesiredDeployment d = deployment("pd", "SGLang")
                .scaling("decode")
                .role(role("decode").kind("Decode"))
                .desired();

        List<StatusNews.News> news = StatusNews.between(null, status(d, null));

        assertThat(news)
                .extracting(StatusNews.News::reason, StatusNews.News::warning)
                .containsExactly(
                        tuple("ReplicasNotReady", false),
                        tuple("ReplicasCreating", false),
                        tuple("GraceTooShortForSplitRole", true));
        assertThat(news.get(2).message()).startsWith("role decode: ");
    }

    @Test
    void theOperatorAtWorkIsToldAsNormalAndWhatAsksForAPersonAsAWarning() {
        List<Condition> before = List.of(
                unmet(Conditions.RETIREMENT_BLOCKED, "NotBlocked"), met(Conditions.ROUTER_READY, "RouterAvailable"));
        List<Condition> blocked = List.of(
                unmet(Conditions.REPLICAS_UP_TO_DATE, "ScalingDown"),
                met(Conditions.RETIREMENT_BLOCKED, "RetirementBlocked"),
                unmet(Conditions.ROUTER_READY, "RouterNotReady"));
        List<Condition> unblocked = List.of(
                unmet(Conditions.REPLICAS_UP_TO_DATE, "RolloutInProgress"),
                unmet(Conditions.RETIREMENT_BLOCKED, "NotBlocked"),
                unmet(Conditions.ROUTER_READY, "RouterNotReady"));

        assertThat(StatusNews.between(withConditions(before), withConditions(blocked)))
                .extracting(StatusNews.News::reason, StatusNews.News::warning)
                .containsExactly(
                        tuple("ScalingDown", false), tuple("RetirementBlocked", true), tuple("RouterNotReady", true));
        assertThat(StatusNews.between(withConditions(blocked), withConditions(unblocked)))
                .extracting(StatusNews.News::reason, StatusNews.News::warning)
                .containsExactly(tuple("RolloutInProgress", false), tuple("NotBlocked", false));
        // a router that never was available is still starting
        assertThat(StatusNews.between(
                        withConditions(List.of()),
                        withConditions(List.of(unmet(Conditions.ROUTER_READY, "RouterNotReady")))))
                .extracting(StatusNews.News::warning)
                .containsExactly(false);
    }

    /** A condition that holds, for this reason; its message repeats the reason. */
    private static Condition met(String type, String reason) {
        return condition(type, "True", reason);
    }

    /** A condition that does not hold, for this reason; its message repeats the reason. */
    private static Condition unmet(String type, String reason) {
        return condition(type, "False", reason);
    }

    private static Condition condition(String type, String status, String reason) {
        return new ConditionBuilder()
                .withType(type)
                .withStatus(status)
                .withReason(reason)
                .withMessage(reason)
                .withLastTransitionTime(T0.toString())
                .build();
    }

    private static ModelDeploymentStatus withConditions(List<Condition> conditions) {
        return new ModelDeploymentStatus(1L, "Ready", null, List.of(), null, null, List.of(), List.of(), conditions);
    }

    @Test
    void anUnchangedStatusTellsNothing() {
        DesiredDeployment d = deployment("pd", "SGLang")
                .scaling("decode")
                .role(role("decode").kind("Decode"))
                .desired();
        ModelDeploymentStatus first = status(d, null);

        assertThat(StatusNews.between(first, status(d, first))).isEmpty();
    }

    @Test
    void aCauseSharedByTwoConditionsIsToldOnce() {
        Resolution.Rejected rejected = (Resolution.Rejected)
                Specs.RESOLVER.resolve(deployment("x", "TGI").role(role("s")).build());

        List<StatusNews.News> news =
                StatusNews.between(null, StatusAggregator.rejected(1, rejected, List.of(), List.of(), T0));

        assertThat(news).singleElement().satisfies(n -> {
            assertThat(n.reason()).isEqualTo("InvalidSpec");
            assertThat(n.warning()).isTrue();
        });
    }
}
