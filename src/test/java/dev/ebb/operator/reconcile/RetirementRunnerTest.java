package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.lifecycle.LeaseGuard;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.retire.Budgets;
import dev.ebb.operator.retire.NextRetirement;
import dev.ebb.operator.route.HttpRouterProbe;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimRouterPods;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shell around the retirement machine, pass by pass against the mock API server and a fake llm-d router: what
 * it observes of the withdrawal, and when. Member reads are not the point here; they fail.
 */
class RetirementRunnerTest {
    private static final NextRetirement.RetryPolicy RETRY =
            new NextRetirement.RetryPolicy(java.util.Optional.empty(), java.time.Duration.ofMinutes(5), 1, 0);
    private static final String NS = "runner";
    private static final String KEPT = "qwen-server-r0-m0";
    private static final String TARGET = "qwen-server-r1-m0";
    /** The router's one Pod; the probe is pointed at the fake's admin address whatever it asks. */
    private static final List<Pod> ROUTER_PODS = List.of(SimRouterPods.ready(NS, "qwen-router-0", "127.0.0.1"));

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private KubernetesMockServer server;
    private KubernetesClient client;
    private FakeRouter router;
    private RetirementPasses runner;
    private ModelDeployment md;
    private Instant now = T0;

    @BeforeEach
    void start() throws Exception {
        server = SimApiServer.startServer();
        client = server.createClient();
        DesiredDeployment desired =
                deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
        for (int ordinal = 0; ordinal < 2; ordinal++) {
            for (Pod pod : ObservedPods.replica(desired, "server", ordinal, "h", true)) {
                client.pods()
                        .inNamespace(NS)
                        .resource(new PodBuilder(pod)
                                .editMetadata()
                                .withNamespace(NS)
                                .endMetadata()
                                .editStatus()
                                .withPodIP("10.0.0." + (ordinal + 1))
                                .endStatus()
                                .build())
                        .create();
            }
        }
        md = deployment("qwen", "vLLM")
                .namespace(NS)
                .router(RouterKind.LLM_D_ROUTER.wireName())
                .role(role("server").replicas(1))
                .build();
        router = FakeRouter.inFrontOf(client, NS, "qwen", RouterKind.LLM_D_ROUTER);
        runner = runner(LeaseGuard.NOT_ELECTING);
        await().atMost(Duration.ofSeconds(10)).until(() -> router.selects(TARGET) && router.selects(KEPT));
    }

    private RetirementPasses runner(LeaseGuard lease) {
        URI admin = router.adminUri();
        return RetirementPasses.unread(client, new HttpRouterProbe((routerPod, kind) -> Optional.of(admin)), lease);
    }

    @AfterEach
    void stop() {
        router.close();
        client.close();
        server.destroy();
    }

    private List<Pod> pods() {
        return client.pods().inNamespace(NS).list().getItems();
    }

    /** The role's Service's slice, listing these Pods. */
    private static EndpointSlice sliceListing(String... pods) {
        EndpointSliceBuilder slice = new EndpointSliceBuilder()
                .withNewMetadata()
                .withName("qwen-server-abc")
                .withNamespace(NS)
                .addToLabels(Labels.SERVICE_NAME, Names.roleService("qwen", "server"))
                .endMetadata()
                .withAddressType("IPv4");
        for (String pod : pods) {
            slice.addNewEndpoint()
                    .addToAddresses("10.0.0.9")
                    .withNewTargetRef()
                    .withKind("Pod")
                    .withName(pod)
                    .endTargetRef()
                    .endEndpoint();
        }
        return slice.build();
    }

    /** Why the planner chose the target, as the ranking words it. */
    private static final String CHOSEN = "in flight 0, lowest of 2 read: r1 0, r0 3";

    /** One reconcile's worth: plan, persist the record, carry out; a second later. */
    private RetirementStatus pass(List<EndpointSlice> slices) {
        List<Pod> pods = pods();
        RetirementRunner.Pass pass = runner.runner()
                .plan(
                        md,
                        Inventory.of(pods),
                        pods,
                        List.of(new NextRetirement.Candidate(
                                "server", 1, NextRetirement.Purpose.REDUCTION, CHOSEN, Budgets.DRAINING, false)),
                        List.of(),
                        RETRY,
                        slices,
                        ROUTER_PODS,
                        now);
        md.setStatus(new ModelDeploymentStatus(
                null, null, null, List.of(), null, null, pass.statuses(), List.of(), List.of()));
        runner.actions().carryOut(md, pass, pods, ROUTER_PODS);
        now = now.plusSeconds(1);
        return pass.statuses().get(0);
    }

    /** Begins the retirement and waits until the router has seen the target's withdrawal. */
    private void begin() {
        assertThat(pass(List.of(sliceListing(KEPT, TARGET))).state()).isEqualTo("Withdrawing");
        await().atMost(Duration.ofSeconds(10)).until(() -> !router.selects(TARGET));
    }

    @Test
    void anOperatorThatNoLongerLeadsTakesNothingAwayThatItsPassDecided() {
        List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
        runner = runner(before -> {
            asked.add(before);
            return false;
        });

        assertThat(pass(List.of(sliceListing(KEPT, TARGET))).state()).isEqualTo("Withdrawing");

        assertThat(asked).containsExactly("the retirement actions of " + NS + "/qwen for replica(s) [server/1]");
        assertThat(client.pods()
                        .inNamespace(NS)
                        .withName(TARGET)
                        .get()
                        .getMetadata()
                        .getLabels())
                .containsEntry(Labels.SERVING, Labels.SERVING_YES);
        assertThat(router.selects(TARGET)).isTrue();
    }

    @Test
    void whyTheTargetWasChosenIsWrittenAtTheStartAndKeptOnEveryLaterPass() {
        begin();
        assertThat(md.getStatus().retirements().get(0).chosenBecause()).isEqualTo(CHOSEN);

        RetirementStatus later = pass(List.of(sliceListing(KEPT)));

        assertThat(later.chosenBecause()).isEqualTo(CHOSEN);
    }

    @Test
    void aDispatchToTheTargetBetweenTheWithdrawalAndTheFirstLookHoldsIt() {
        begin();
        router.reportDispatch(TARGET);

        RetirementStatus seen = pass(List.of(sliceListing(KEPT)));

        assertThat(seen.state()).isEqualTo("Withdrawing");
        assertThat(seen.reason()).isEqualTo("RecentDispatch");
    }

    @Test
    void aDispatchToAnotherReplicaDoesNotHoldTheTarget() {
        begin();
        router.reportDispatch(KEPT);

        assertThat(pass(List.of(sliceListing(KEPT))).state()).isEqualTo("Draining");
    }

    @Test
    void noEndpointSliceOfTheRolesServiceIsNotTakenForClear() {
        begin();

        RetirementStatus seen = pass(List.of());

        assertThat(seen.state()).isEqualTo("Withdrawing");
        assertThat(seen.reason()).isEqualTo("EndpointsUnknown");
    }

    @Test
    void aRouterSelectingTheTargetAgainDuringTheDrainHoldsItAsWithdrawalLost() {
        begin();
        assertThat(pass(List.of(sliceListing(KEPT))).state()).isEqualTo("Draining");
        router.pin(TARGET, true);

        RetirementStatus seen = pass(List.of(sliceListing(KEPT)));

        assertThat(seen.state()).isEqualTo("Draining");
        assertThat(seen.reason()).isEqualTo("WithdrawalLost");
        assertThat(seen.message()).contains("router");
    }

    @Test
    void anEndpointSliceListingTheTargetAgainDuringTheDrainHoldsItAsWithdrawalLost() {
        begin();
        assertThat(pass(List.of(sliceListing(KEPT))).state()).isEqualTo("Draining");

        RetirementStatus seen = pass(List.of(sliceListing(KEPT, TARGET)));

        assertThat(seen.reason()).isEqualTo("WithdrawalLost");
        assertThat(seen.message()).contains("EndpointSlice");
    }

    @Test
    void theServingLabelPutBackDuringTheDrainHoldsItAsWithdrawalLostAndIsWithdrawnAgain() {
        begin();
        assertThat(pass(List.of(sliceListing(KEPT))).state()).isEqualTo("Draining");
        client.pods()
                .inNamespace(NS)
                .withName(TARGET)
                .edit(p -> new PodBuilder(p)
                        .editMetadata()
                        .addToLabels(Labels.SERVING, Labels.SERVING_YES)
                        .endMetadata()
                        .build());

        RetirementStatus seen = pass(List.of(sliceListing(KEPT)));

        assertThat(seen.reason()).isEqualTo("WithdrawalLost");
        assertThat(seen.message()).contains(Labels.SERVING);
        assertThat(client.pods()
                        .inNamespace(NS)
                        .withName(TARGET)
                        .get()
                        .getMetadata()
                        .getLabels())
                .containsEntry(Labels.SERVING, "false");
    }
}
