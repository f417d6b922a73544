package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.v1alpha1.AbortedRetirement;
import dev.ebb.operator.api.v1alpha1.DrainStatus;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.retire.Reason;
import dev.ebb.operator.retire.Retirement;
import dev.ebb.operator.retire.RetirementMachine;
import dev.ebb.operator.retire.RetirementMachineTest;
import dev.ebb.operator.retire.RetirementRecord;
import dev.ebb.operator.retire.RetirementRecords;
import dev.ebb.operator.retire.RetirementState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class StatusAggregatorTest {
    private static final PodRenderer RENDERER = new PodRenderer();
    private static final RetirementMachine MACHINE = new RetirementMachine();
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Instant T1 = Instant.parse("2026-01-01T00:05:00Z");

    private final DesiredDeployment d = deployment("qwen", "vLLM")
            .role(role("server").replicas(2))
            .role(role("custom").command("/bin/x"))
            .desired();
    private final Map<String, String> hashes =
            d.roles().stream().collect(Collectors.toMap(DesiredRole::name, r -> RENDERER.configHash(d, r)));

    private ModelDeploymentStatus status(List<Pod> pods, List<Condition> previous, Instant now) {
        return StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(pods),
                Optional.empty(),
                List.of(),
                List.of(),
                List.of(),
                previous,
                now);
    }

    private List<Pod> server(int... ordinals) {
        List<Pod> pods = new ArrayList<>();
        for (int o : ordinals) {
            pods.addAll(ObservedPods.replica(d, "server", o, hashes.get("server"), true));
        }
        return pods;
    }

    private List<Pod> everyReplicaReady() {
        List<Pod> pods = server(0, 1);
        pods.addAll(ObservedPods.replica(d, "custom", 0, hashes.get("custom"), true));
        return pods;
    }

    @Test
    void statusSaysWhenTheScaledReplicasOverrideTheRolesOwn() {
        DesiredDeployment scaled = deployment("qwen", "vLLM")
                .scaling("server", 1)
                .role(role("server").replicas(2))
                .desired();
        Map<String, String> scaledHashes =
                Map.of("server", RENDERER.configHash(scaled, scaled.roles().get(0)));
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(scaled, "server", 0, scaledHashes.get("server"), true));
        pods.addAll(ObservedPods.replica(scaled, "server", 1, scaledHashes.get("server"), true));

        ModelDeploymentStatus status = StatusAggregator.accepted(
                RENDERER,
                7,
                scaled,
                scaledHashes,
                Inventory.of(pods),
                Optional.empty(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                T0);

        assertThat(status.scaling().override())
                .startsWith("spec.scaling.replicas (1) takes precedence over spec.roles[0].replicas (2)");
        assertThat(status.scaling().replicas())
                .as("both still exist until one is retired")
                .isEqualTo(2);
        assertThat(status.roles().get(0).desired()).isEqualTo(1);
    }

    @Test
    void theScaleSubresourceReadsTheScaledRolesReplicasAndItsServingLeadersSelector() {
        ModelDeploymentStatus status = status(server(0, 1, 2), List.of(), T0);

        assertThat(status.scaling().role()).isEqualTo("server");
        assertThat(status.scaling().replicas()).isEqualTo(3);
        assertThat(status.scaling().selector())
                .isEqualTo("serving.ebb.dev/deployment=qwen,serving.ebb.dev/member-index=0,"
                        + "serving.ebb.dev/role=server,serving.ebb.dev/serving=true");
        assertThat(status.scaling().override()).isNull();
    }

    @Test
    void everyReplicaReadyMakesThePhaseReady() {
        List<Pod> pods = everyReplicaReady();

        ModelDeploymentStatus status = status(pods, List.of(), T0);

        assertThat(status.phase()).isEqualTo("Ready");
        assertThat(status.observedGeneration()).isEqualTo(7);
        assertThat(status.rolesSummary()).isEqualTo("server 2/2, custom 1/1");
        assertThat(status.roles())
                .extracting(r ->
                        List.of(r.name(), r.kind(), r.desired(), r.current(), r.ready(), r.updated(), r.unmanaged()))
                .containsExactly(
                        List.of("server", "Server", 2, 2, 2, 2, false), List.of("custom", "Server", 1, 1, 1, 1, true));
        assertThat(status.roles().get(0).drain()).isEqualTo(new DrainStatus(30, 25, 27, 19, List.of()));
        assertThat(status.roles().get(1).drain().graceSeconds()).isNull();
        assertThat(status.roles().get(1).drain().sigtermBy()).isNull();
        assertThat(status.roles().get(1).drain().warnings())
                .extracting(DrainStatus.Warning::reason)
                .containsExactly("NoDrainHook");
        assertThat(Conditions.find(status.conditions(), "Ready").orElseThrow().getStatus())
                .isEqualTo("True");
        assertThat(Conditions.find(status.conditions(), "ReplicasUpToDate")
                        .orElseThrow()
                        .getStatus())
                .isEqualTo("True");
    }

    @Test
    void missingReplicasKeepThePhaseStartingAndSaySo() {
        ModelDeploymentStatus status = status(server(0), List.of(), T0);

        assertThat(status.phase()).isEqualTo("Starting");
        Condition upToDate =
                Conditions.find(status.conditions(), "ReplicasUpToDate").orElseThrow();
        assertThat(upToDate.getReason()).isEqualTo("ReplicasCreating");
        assertThat(Conditions.find(status.conditions(), "Ready").orElseThrow().getMessage())
                .contains("role server has 1/2 replicas ready")
                .contains("role custom has 0/1");
    }

    @Test
    void surplusIsReportedAsScalingDownAndARetirementInProgressAsProgressing() {
        List<Pod> pods = server(0, 1, 2);
        pods.addAll(ObservedPods.replica(d, "custom", 0, hashes.get("custom"), true));

        RetirementStatus draining = status(RetirementMachineTest.draining());

        ModelDeploymentStatus status = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(pods),
                Optional.empty(),
                List.of(draining),
                List.of(),
                List.of(),
                List.of(),
                T0);

        Condition upToDate =
                Conditions.find(status.conditions(), "ReplicasUpToDate").orElseThrow();
        assertThat(upToDate.getStatus()).isEqualTo("False");
        assertThat(upToDate.getReason()).isEqualTo(StatusAggregator.REASON_SCALING_DOWN);
        assertThat(upToDate.getMessage()).contains("role server keeps 1 replica(s) beyond spec");
        assertThat(status.roles().get(0).current()).isEqualTo(3);
        assertThat(status.retirements()).containsExactly(draining);
        assertThat(status.retirementsSummary()).isEqualTo("Draining");
        Condition retiring = Conditions.find(status.conditions(), Conditions.RETIREMENT_PROGRESSING)
                .orElseThrow();
        assertThat(retiring.getStatus()).isEqualTo("True");
        assertThat(retiring.getReason()).isEqualTo(draining.reason());
        assertThat(retiring.getMessage()).startsWith("replica 2 of role server (ScaleDown, Draining): ");
    }

    private static RetirementStatus status(Retirement retirement) {
        return RetirementRecords.toStatus(new RetirementRecord(retirement, null, Optional.empty(), 1));
    }

    private static Retirement at(Retirement r, int ordinal, RetirementState state) {
        return new Retirement(
                r.role(),
                ordinal,
                r.cause(),
                r.targets(),
                r.answering(),
                r.standingHold(),
                state,
                r.reason(),
                r.message(),
                r.startedAt(),
                r.phaseStartedAt(),
                r.reads(),
                r.dispatchBaseline(),
                r.drainBudget());
    }

    @Test
    void severalRetirementsAreSummedUpInTheColumnAndTheCondition() {
        Retirement draining = RetirementMachineTest.draining();
        List<RetirementStatus> three = List.of(
                status(at(draining, 1, RetirementState.Draining)),
                status(at(draining, 2, RetirementState.Draining)),
                status(at(draining, 3, RetirementState.Withdrawing)));

        ModelDeploymentStatus status = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(server(0, 1, 2, 3)),
                Optional.empty(),
                three,
                List.of(),
                List.of(),
                List.of(),
                T0);

        assertThat(status.retirementsSummary()).isEqualTo("2 Draining, 1 Withdrawing");
        assertThat(Conditions.find(status.conditions(), Conditions.RETIREMENT_PROGRESSING))
                .hasValueSatisfying(c -> {
                    assertThat(c.getStatus()).isEqualTo("True");
                    assertThat(c.getReason())
                            .as("one reason shared by all")
                            .isEqualTo(draining.reason().wire());
                    assertThat(c.getMessage())
                            .startsWith("3 retirements under way: replica 1 of role server (ScaleDown, Draining)")
                            .contains("replica 3 of role server (ScaleDown, Withdrawing)");
                });
        Retirement started = RetirementMachineTest.draining();
        Retirement other = new Retirement(
                started.role(),
                4,
                started.cause(),
                started.targets(),
                started.answering(),
                started.standingHold(),
                RetirementState.Withdrawing,
                Reason.ENDPOINTS_STILL_LIST,
                "listed",
                started.startedAt(),
                started.phaseStartedAt(),
                started.reads(),
                started.dispatchBaseline(),
                started.drainBudget());
        List<RetirementStatus> mixed = List.of(status(at(draining, 1, RetirementState.Draining)), status(other));
        assertThat(Conditions.find(
                        StatusAggregator.accepted(
                                        RENDERER,
                                        7,
                                        d,
                                        hashes,
                                        Inventory.of(server(0, 1, 2, 3)),
                                        Optional.empty(),
                                        mixed,
                                        List.of(),
                                        List.of(),
                                        List.of(),
                                        T0)
                                .conditions(),
                        Conditions.RETIREMENT_PROGRESSING))
                .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo(StatusAggregator.REASON_RETIREMENTS));
    }

    @Test
    void aReplicaAbortedThreeTimesInARowIsReportedBlockedUntilRetried() {
        AbortedRetirement third = new AbortedRetirement(
                "server", 2, "ScaleDown", 3, 7L, "Busy", "not proven idle within 240 s", T0.toString(), null, null);
        AbortedRetirement second = new AbortedRetirement(
                "server",
                1,
                "ScaleDown",
                2,
                7L,
                "Busy",
                "busy",
                T0.toString(),
                T0.plusSeconds(600).toString(),
                null);

        ModelDeploymentStatus blocked = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(server(0, 1, 2)),
                Optional.empty(),
                List.of(),
                List.of(third, second),
                List.of(),
                List.of(),
                T0);
        ModelDeploymentStatus cleared = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(server(0, 1, 2)),
                Optional.empty(),
                List.of(),
                List.of(second),
                List.of(),
                blocked.conditions(),
                T1);

        assertThat(Conditions.find(blocked.conditions(), Conditions.RETIREMENT_BLOCKED))
                .hasValueSatisfying(c -> {
                    assertThat(c.getStatus()).isEqualTo("True");
                    assertThat(c.getMessage())
                            .startsWith(
                                    "replica 2 of role server aborted 3 times in a row, last Busy: not proven idle within 240 s")
                            .contains("serving.ebb.dev/retry-retirement")
                            .doesNotContain("replica 1");
                });
        assertThat(Conditions.find(cleared.conditions(), Conditions.RETIREMENT_BLOCKED))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
        assertThat(blocked.phase())
                .as("a replica the protocol cannot take away")
                .isEqualTo(StatusAggregator.PHASE_DEGRADED);
        assertThat(StatusNews.between(blocked, cleared))
                .extracting(StatusNews.News::reason)
                .contains(StatusAggregator.REASON_NOT_BLOCKED);
        assertThat(StatusNews.between(null, cleared))
                .extracting(StatusNews.News::reason)
                .as("never blocked: nothing to tell")
                .doesNotContain(StatusAggregator.REASON_NOT_BLOCKED);
    }

    @Test
    void aReplicaThatRanAndStoppedBeingReadyMakesTheDeploymentDegradedNotStarting() {
        List<Pod> pods = server(0);
        Pod restarted = ObservedPods.withReady(
                ObservedPods.replica(d, "server", 1, hashes.get("server"), false)
                        .get(0),
                false);
        restarted.getStatus().getContainerStatuses().get(0).setRestartCount(3);
        pods.add(restarted);
        pods.addAll(ObservedPods.replica(d, "custom", 0, hashes.get("custom"), true));
        List<Pod> starting = server(0);
        starting.add(ObservedPods.withReady(
                ObservedPods.replica(d, "server", 1, hashes.get("server"), false)
                        .get(0),
                false));
        starting.addAll(ObservedPods.replica(d, "custom", 0, hashes.get("custom"), true));

        ModelDeploymentStatus failing = status(pods, List.of(), T0);
        ModelDeploymentStatus loading = status(starting, List.of(), T0);

        assertThat(failing.phase()).isEqualTo(StatusAggregator.PHASE_DEGRADED);
        assertThat(Conditions.find(failing.conditions(), Conditions.READY)).hasValueSatisfying(c -> {
            assertThat(c.getReason()).isEqualTo(StatusAggregator.REASON_REPLICAS_FAILING);
            assertThat(c.getMessage()).startsWith("replica 1 of role server ran and is not Ready");
        });
        assertThat(loading.phase())
                .as("not Ready while loading its model is still starting")
                .isEqualTo(StatusAggregator.PHASE_STARTING);
    }

    @Test
    void anAbortedRetirementIsNotProgressingAndKeepsItsReason() {
        Retirement aborted =
                MACHINE.cancel(RetirementMachineTest.draining(), T0).retirement();

        ModelDeploymentStatus status = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(server(0, 1)),
                Optional.empty(),
                List.of(status(aborted)),
                List.of(),
                List.of(),
                List.of(),
                T0);

        Condition retiring = Conditions.find(status.conditions(), Conditions.RETIREMENT_PROGRESSING)
                .orElseThrow();
        assertThat(retiring.getStatus()).isEqualTo("False");
        assertThat(retiring.getReason()).isEqualTo("NoLongerWanted");
    }

    @Test
    void aRouterWithNoReplicaReadyIsReportedAndOneReadyIsAvailable() {
        ModelDeploymentStatus down = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(server(0, 1)),
                Optional.of(new RouterStatus("llm-d-router", "http://qwen-router.ns.svc:8081", false, 0)),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                T0);
        ModelDeploymentStatus up = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(server(0, 1)),
                Optional.of(new RouterStatus("llm-d-router", "http://qwen-router.ns.svc:8081", true, 2)),
                List.of(),
                List.of(),
                List.of(),
                down.conditions(),
                T1);

        assertThat(down.router())
                .isEqualTo(new RouterStatus("llm-d-router", "http://qwen-router.ns.svc:8081", false, 0));
        assertThat(Conditions.find(down.conditions(), Conditions.ROUTER_READY)).hasValueSatisfying(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("RouterNotReady");
        });
        assertThat(Conditions.find(up.conditions(), Conditions.ROUTER_READY)).hasValueSatisfying(c -> {
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getMessage()).contains("2 replica(s) ready");
            assertThat(c.getLastTransitionTime()).isEqualTo(T1.toString());
        });
        assertThat(StatusNews.between(down, up))
                .anySatisfy(n -> assertThat(n.reason()).isEqualTo("RouterAvailable"));
        assertThat(StatusNews.between(up, down)).anySatisfy(n -> {
            assertThat(n.reason()).isEqualTo("RouterNotReady");
            assertThat(n.warning()).isTrue();
        });
    }

    @Test
    void withNoRetirementOnRecordNothingIsProgressing() {
        Condition retiring = Conditions.find(
                        status(server(0, 1), List.of(), T0).conditions(), Conditions.RETIREMENT_PROGRESSING)
                .orElseThrow();

        assertThat(retiring.getStatus()).isEqualTo("False");
        assertThat(retiring.getReason()).isEqualTo(StatusAggregator.REASON_NO_RETIREMENT);
    }

    @Test
    void replicaAtAnOlderConfigurationIsNotUpdated() {
        List<Pod> pods = new ArrayList<>(server(0));
        pods.addAll(ObservedPods.replica(d, "server", 1, "older", true));
        pods.addAll(ObservedPods.replica(d, "custom", 0, hashes.get("custom"), true));

        ModelDeploymentStatus status = status(pods, List.of(), T0);

        assertThat(status.roles().get(0).updated()).isEqualTo(1);
        assertThat(Conditions.find(status.conditions(), "ReplicasUpToDate")
                        .orElseThrow()
                        .getReason())
                .isEqualTo(StatusAggregator.REASON_ROLLOUT);
    }

    @Test
    void notReadyOrTerminatingMemberMakesItsReplicaNotReady() {
        List<Pod> pods = new ArrayList<>(ObservedPods.replica(d, "server", 0, hashes.get("server"), false));
        Pod leaving =
                ObservedPods.replica(d, "server", 1, hashes.get("server"), true).get(0);
        leaving.getMetadata().setDeletionTimestamp(T0.toString());
        pods.add(leaving);

        assertThat(status(pods, List.of(), T0).roles().get(0).ready()).isZero();
    }

    @Test
    void unchangedConditionKeepsItsTransitionTimeSoNothingIsRewritten() {
        ModelDeploymentStatus first = status(server(0), List.of(), T0);
        ModelDeploymentStatus again = status(server(0), first.conditions(), T1);
        ModelDeploymentStatus changed = status(server(0, 1), first.conditions(), T1);

        assertThat(again).isEqualTo(first);
        assertThat(Conditions.find(changed.conditions(), "ReplicasUpToDate")
                        .orElseThrow()
                        .getLastTransitionTime())
                .isEqualTo(T0.toString());
        assertThat(Conditions.find(changed.conditions(), "Ready").orElseThrow().getLastTransitionTime())
                .isEqualTo(T0.toString());
    }

    @Test
    void deletingKeepsTheLastWordOnTheRolesAndSaysHowManyPodsAreStillDraining() {
        List<Pod> pods = everyReplicaReady();
        ModelDeploymentStatus last = status(pods, List.of(), T0);
        assertThat(last.phase()).isEqualTo("Ready");

        ModelDeploymentStatus deleting = StatusAggregator.deleting(last, 7, 2, T1);

        assertThat(deleting.phase()).isEqualTo("Deleting");
        assertThat(deleting.roles()).isEqualTo(last.roles());
        Condition ready = Conditions.find(deleting.conditions(), "Ready").orElseThrow();
        assertThat(List.of(ready.getStatus(), ready.getReason(), ready.getLastTransitionTime()))
                .containsExactly("False", "Deleting", T1.toString());
        assertThat(ready.getMessage()).startsWith("2 Pod(s) still draining");
        assertThat(deleting.conditions())
                .extracting(Condition::getType)
                .containsExactlyInAnyOrder(
                        "Ready", "ReplicasUpToDate", "RetirementProgressing", "RetirementBlocked", "NodeMaintenance");
        assertThat(StatusAggregator.deleting(deleting, 7, 1, T1.plusSeconds(9))
                        .conditions()
                        .get(0)
                        .getLastTransitionTime())
                .as("one Pod fewer is the same condition, not a new transition")
                .isEqualTo(T1.toString());
    }

    @Test
    void deletingBeforeAnyStatusWasWrittenStillSaysDeleting() {
        ModelDeploymentStatus deleting = StatusAggregator.deleting(null, 1, 3, T0);

        assertThat(deleting.phase()).isEqualTo("Deleting");
        assertThat(deleting.roles()).isEmpty();
        assertThat(deleting.conditions()).extracting(Condition::getReason).containsExactly("Deleting");
    }

    @Test
    void rejectedSpecIsDegradedAndNamesTheField() {
        Resolution.Rejected rejected = (Resolution.Rejected)
                Specs.RESOLVER.resolve(deployment("qwen", "TGI").role(role("s")).build());

        ModelDeploymentStatus status = StatusAggregator.rejected(3, rejected, List.of(), List.of(), T0);

        assertThat(status.phase()).isEqualTo("Degraded");
        Condition ready = Conditions.find(status.conditions(), "Ready").orElseThrow();
        assertThat(ready.getReason()).isEqualTo("InvalidSpec");
        assertThat(ready.getMessage()).startsWith("spec.engine.name: unsupported value \"TGI\"");
    }

    @Test
    void namesAnotherOwnerHoldsMakeTheDeploymentDegradedNamingTheHolder() {
        ModelDeploymentStatus status = StatusAggregator.accepted(
                RENDERER,
                7,
                d,
                hashes,
                Inventory.of(server(0, 1)),
                Optional.empty(),
                List.of(),
                List.of(),
                List.of(
                        new Ownership.Conflict("Service", "qwen-server", "ModelDeployment qwen-other"),
                        new Ownership.Conflict("Pod", "qwen-server-r0-m0", "ModelDeployment qwen-other")),
                List.of(),
                T0);

        assertThat(status.phase()).isEqualTo(StatusAggregator.PHASE_DEGRADED);
        assertThat(Conditions.find(status.conditions(), Conditions.READY)).hasValueSatisfying(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo(StatusAggregator.REASON_NAME_CONFLICT);
            assertThat(c.getMessage())
                    .startsWith("Service qwen-server belongs to ModelDeployment qwen-other; "
                            + "Pod qwen-server-r0-m0 belongs to ModelDeployment qwen-other");
        });
    }
}
