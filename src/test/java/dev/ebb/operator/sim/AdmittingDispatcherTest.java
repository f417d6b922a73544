package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.URLUtils;
import java.util.List;
import java.util.stream.IntStream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The test world's API server refuses a bad ModelDeployment whichever way it is written (create, update, merge patch,
 * server-side apply) with the API server's own wording, lets the status of a good one be written, and honours a
 * delete's uid precondition, as the operator's deletions rely on it.
 */
class AdmittingDispatcherTest {
    private KubernetesMockServer server;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        server = SimApiServer.startServer();
        client = server.createClient();
    }

    @AfterEach
    void stop() {
        client.close();
        server.destroy();
    }

    /** The server again, on a store the test reaches into, and the test's client to it. */
    private AdmittingDispatcher restartOnOwnStore(
            java.util.function.Function<KubernetesMockServer, KubernetesClient> newClient) {
        stop();
        AdmittingDispatcher dispatcher = SimApiServer.dispatcher();
        server = SimApiServer.startServer(dispatcher);
        client = newClient.apply(server);
        return dispatcher;
    }

    private void deleteWithUid(String name, String uid) {
        String url = URLUtils.join(client.getMasterUrl().toString(), "api", "v1", "namespaces", "ns", "pods", name);
        client.raw(
                url,
                "DELETE",
                new DeleteOptionsBuilder()
                        .withNewPreconditions()
                        .withUid(uid)
                        .endPreconditions()
                        .build());
    }

    @Test
    void aDeleteNamingAnotherUidIsRefusedAndTheRightOneDeletes() {
        Pod pod = client.pods()
                .inNamespace("ns")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("p")
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("main")
                        .withImage("x")
                        .endContainer()
                        .endSpec()
                        .build())
                .create();

        KubernetesClientException refused =
                catchThrowableOfType(KubernetesClientException.class, () -> deleteWithUid("p", "not-its-uid"));

        assertThat(refused.getCode()).isEqualTo(409);
        assertThat(refused.getMessage()).contains("Precondition failed");
        assertThat(client.pods().inNamespace("ns").withName("p").get()).isNotNull();

        deleteWithUid("p", pod.getMetadata().getUid());
        assertThat(client.pods().inNamespace("ns").withName("p").get()).isNull();
    }

    @Test
    void aFailedRequestChangesNothingUntilTheFaultIsLifted() {
        AdmittingDispatcher dispatcher = restartOnOwnStore(SimApiServer::clientWithoutRetries);
        Pod pod = client.pods()
                .inNamespace("ns")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("p")
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("main")
                        .withImage("x")
                        .endContainer()
                        .endSpec()
                        .build())
                .create();
        dispatcher.fail("DELETE", "/api/v1/namespaces/ns/pods/p", 503);

        KubernetesClientException refused = catchThrowableOfType(
                KubernetesClientException.class,
                () -> deleteWithUid("p", pod.getMetadata().getUid()));

        assertThat(refused.getCode()).isEqualTo(503);
        assertThat(dispatcher.failed()).isPositive();
        assertThat(client.pods().inNamespace("ns").withName("p").get()).isNotNull();
        dispatcher.lift();
        deleteWithUid("p", pod.getMetadata().getUid());
        assertThat(client.pods().inNamespace("ns").withName("p").get()).isNull();
    }

    private static Pod pod(String name) {
        return new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("main")
                .withImage("x")
                .endContainer()
                .endSpec()
                .build();
    }

    @Test
    void anUnreliableCallerHasAShareOfItsWritesRefusedLateAndEveryoneElseNone() {
        AdmittingDispatcher dispatcher = restartOnOwnStore(SimApiServer::clientWithoutRetries);
        try (KubernetesClient flaky = SimApiServer.clientWithoutRetries(server, "flaky-operator")) {
            dispatcher.unreliable(new UnreliableApi("flaky-operator", 0.5, java.time.Duration.ofMillis(20), 42));
            List<Integer> codes = new java.util.ArrayList<>();
            for (int i = 0; i < 40; i++) {
                Pod written = pod("p" + i);
                KubernetesClientException refused = catchThrowableOfType(
                        KubernetesClientException.class,
                        () -> flaky.pods().inNamespace("ns").resource(written).create());
                codes.add(refused == null ? 201 : refused.getCode());
                client.pods().inNamespace("ns").resource(pod("q" + i)).create();
            }
            List<Integer> labelled = IntStream.range(0, 20)
                    .mapToObj(i -> catchThrowableOfType(
                            KubernetesClientException.class,
                            () -> flaky.pods()
                                    .inNamespace("ns")
                                    .resource(new PodBuilder(flaky.pods()
                                                    .inNamespace("ns")
                                                    .withName("q0")
                                                    .get())
                                            .editMetadata()
                                            .addToLabels("edited", "yes")
                                            .endMetadata()
                                            .build())
                                    .update()))
                    .map(e -> e == null ? 200 : e.getCode())
                    .toList();

            // 40 draws at one half: fewer than 8 or more than 32 refusals has odds below one in 100,000
            assertThat(codes).filteredOn(c -> c != 201).hasSizeBetween(8, 32).allMatch(c -> c == 500 || c == 429);
            assertThat(codes).contains(201);
            assertThat(flaky.pods().inNamespace("ns").list().getItems())
                    .hasSize(40 + (int) codes.stream().filter(c -> c == 201).count());
            assertThat(labelled)
                    .as("a stale-write conflict is one of the refusals of an update")
                    .contains(409);
            assertThat(dispatcher.failed())
                    .isEqualTo((int) (codes.stream().filter(c -> c != 201).count()
                            + labelled.stream().filter(c -> c != 200).count()));
        }
    }

    @Test
    void anExpiredWatchMakesAnInformerListAndWatchAgainWithoutMissingAChange() {
        AdmittingDispatcher dispatcher = restartOnOwnStore(KubernetesMockServer::createClient);
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        client.pods().inNamespace("ns").resource(pod("before")).create();
        try (var informer = client.pods()
                .inNamespace("ns")
                .inform(new io.fabric8.kubernetes.client.informers.ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Pod obj) {
                        seen.add(obj.getMetadata().getName());
                    }

                    @Override
                    public void onUpdate(Pod oldObj, Pod newObj) {
                        seen.add(newObj.getMetadata().getName());
                    }

                    @Override
                    public void onDelete(Pod obj, boolean deletedFinalStateUnknown) {
                        seen.remove(obj.getMetadata().getName());
                    }
                })) {
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> dispatcher.watchesOpened() == 1);
            assertThat(seen).containsExactly("before");

            assertThat(dispatcher.expireWatches()).isEqualTo(1);
            client.pods().inNamespace("ns").withName("before").delete();
            client.pods().inNamespace("ns").resource(pod("after")).create();

            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(20))
                    .untilAsserted(() -> {
                        assertThat(dispatcher.watchesOpened()).isEqualTo(2);
                        assertThat(seen).containsExactly("after");
                    });
        }
    }

    /**
     * A watch that ends without an error (a restarting API server, a proxy's idle timeout) is opened again by the
     * client from the last resourceVersion it saw, and a real API server replays what happened since, deletions
     * included. An informer whose watch came back after a Pod was deleted must not keep that Pod.
     */
    @Test
    void aWatchOpenedAgainFromAnOlderVersionIsToldOfWhatWasDeletedMeanwhile() {
        AdmittingDispatcher dispatcher = restartOnOwnStore(KubernetesMockServer::createClient);
        client.pods().inNamespace("ns").resource(pod("deleted-meanwhile")).create();
        client.pods().inNamespace("ns").resource(pod("kept")).create();
        try (var informer = client.pods().inNamespace("ns").inform()) {
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> dispatcher.watchesOpened() == 1);
            // the watch cannot come back until the deletion has happened
            dispatcher.fail("GET", "/api/v1/namespaces/ns/pods", 503);
            assertThat(dispatcher.dropWatches()).isEqualTo(1);
            client.pods().inNamespace("ns").withName("deleted-meanwhile").delete();
            client.pods().inNamespace("ns").resource(pod("created-meanwhile")).create();
            dispatcher.lift();

            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(20))
                    .untilAsserted(() -> {
                        assertThat(dispatcher.watchesOpened()).isEqualTo(2);
                        assertThat(informer.getStore().list())
                                .extracting(p -> p.getMetadata().getName())
                                .containsExactlyInAnyOrder("kept", "created-meanwhile");
                    });
        }
    }

    /** A watch from before the oldest deletion the server still remembers is told to list again, as with a real server. */
    @Test
    void aWatchFromBeforeWhatTheServerRemembersIsExpired() {
        DeletionHistory history = new DeletionHistory(2);
        io.fabric8.mockwebserver.crud.AttributeSet anyPod = new io.fabric8.mockwebserver.crud.AttributeSet();
        history.deleted("v1/Pod/ns/a", 10, anyPod, "{\"metadata\":{\"name\":\"a\"}}");
        history.deleted("v1/Pod/ns/b", 11, anyPod, "{\"metadata\":{\"name\":\"b\"}}");
        history.deleted("v1/Pod/ns/c", 12, anyPod, "{\"metadata\":{\"name\":\"c\"}}");

        assertThat(history.since(9, anyPod)).isEmpty();
        assertThat(history.since(10, anyPod))
                .hasValueSatisfying(events -> assertThat(events)
                        .hasSize(2)
                        .allSatisfy(e -> assertThat(e).startsWith("{\"type\":\"DELETED\"")));
        assertThat(history.since(12, anyPod)).hasValue(List.of());
    }

    /** An object written again after its deletion is no deletion to replay: the watch's own ADDED carries it. */
    @Test
    void aDeletionUndoneByANewObjectOfTheSameNameIsNotReplayed() {
        DeletionHistory history = new DeletionHistory(10);
        io.fabric8.mockwebserver.crud.AttributeSet anyPod = new io.fabric8.mockwebserver.crud.AttributeSet();
        history.deleted("v1/Pod/ns/a", 10, anyPod, "{\"metadata\":{\"name\":\"a\"}}");
        history.written("v1/Pod/ns/a");

        assertThat(history.since(1, anyPod)).hasValue(List.of());
    }

    /** A real API server answers the write that removes the last finalizer with the object as it was deleted. */
    @Test
    void removingTheLastFinalizerOfADeletedObjectAnswersWithTheObjectAndDeletesIt() {
        client.pods()
                .inNamespace("ns")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("held")
                        .addToFinalizers("test/hold")
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("main")
                        .withImage("x")
                        .endContainer()
                        .endSpec()
                        .build())
                .create();
        client.pods().inNamespace("ns").withName("held").delete();
        assertThat(client.pods()
                        .inNamespace("ns")
                        .withName("held")
                        .get()
                        .getMetadata()
                        .getDeletionTimestamp())
                .isNotNull();

        Pod answer = client.pods()
                .inNamespace("ns")
                .withName("held")
                .patch(PatchContext.of(PatchType.JSON), "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]");

        assertThat(answer).isNotNull();
        assertThat(answer.getMetadata().getName()).isEqualTo("held");
        assertThat(answer.getMetadata().getFinalizers()).isEmpty();
        assertThat(client.pods().inNamespace("ns").withName("held").get()).isNull();
    }

    private static final String NS = "adm";
    private static final String INVALID = "ModelDeployment.serving.ebb.dev \"good\" is invalid: ";

    private ModelDeployment createGood() {
        return client.resource(Specs.deployment("good", "vLLM")
                        .namespace(NS)
                        .role(Specs.role("server"))
                        .build())
                .create();
    }

    private ModelDeployment stored() {
        return client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("good")
                .get();
    }

    private static String refusal(ThrowingCallable write) {
        KubernetesClientException refused = catchThrowableOfType(KubernetesClientException.class, write);
        assertThat(refused).as("the API server should refuse it").isNotNull();
        assertThat(refused.getCode()).isEqualTo(422);
        return refused.getStatus().getMessage();
    }

    @Test
    void aPlainUpdateOfABadChangeIsRefusedAndNothingChanges() {
        ModelDeployment md = createGood();
        ModelDeploymentSpec spec = md.getSpec();
        md.setSpec(new ModelDeploymentSpec(
                spec.model(),
                spec.engine(),
                spec.router(),
                List.of(Specs.role("server").size(0).build())));

        assertThat(refusal(() -> client.resource(md).update()))
                .isEqualTo(
                        INVALID
                                + "spec.roles[0].size: Invalid value: 0: spec.roles[0].size in body should be greater than or equal to 1");
        assertThat(stored().getSpec().roles().get(0).size()).isNull();
    }

    @Test
    void aMergePatchIsRefusedWithTheCrdsMessage() {
        createGood();

        assertThat(refusal(() -> client.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("good")
                        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"engine\":{\"name\":\"SGLang\"}}}")))
                .isEqualTo(INVALID + "spec.engine.name: Invalid value: spec.engine.name is immutable; "
                        + "create a new ModelDeployment to change engines");
        assertThat(stored().getSpec().engine().name()).isEqualTo("vLLM");
    }

    @Test
    void aServerSideApplyIsRefusedWithTheCrdsMessage() {
        createGood();
        ModelDeployment applied = Specs.deployment("good", "vLLM")
                .namespace(NS)
                .router("sglang-gateway")
                .role(Specs.role("server"))
                .build();
        applied.getMetadata().setUid(null);

        assertThat(refusal(() -> client.resource(applied)
                        .fieldManager("kubectl")
                        .forceConflicts()
                        .serverSideApply()))
                .isEqualTo(INVALID + "spec.router.name: Invalid value: spec.router.name does not fit spec.engine.name: "
                        + "vllm-router serves only vLLM, sglang-gateway only SGLang, llm-d-router either");
        assertThat(stored().getSpec().router()).isNull();
    }

    @Test
    void severalErrorsAreListedTogetherInBrackets() {
        String message = refusal(() -> client.resource(Specs.deployment("good", "vLLM")
                        .namespace(NS)
                        .role(Specs.role("server").size(0).grace(3601))
                        .build())
                .create());

        assertThat(message)
                .startsWith(INVALID + "[")
                .endsWith("]")
                .contains(
                        "spec.roles[0].size: Invalid value: 0: spec.roles[0].size in body should be greater than or equal to 1")
                .contains("spec.roles[0].terminationGracePeriodSeconds: Invalid value: 3601: "
                        + "spec.roles[0].terminationGracePeriodSeconds in body should be less than or equal to 3600")
                .contains(", ");
    }

    @Test
    void replicasAndRoleCountsBeyondTheirBoundsAreRefusedOnCreate() {
        assertThat(refusal(() -> client.resource(Specs.deployment("good", "vLLM")
                                .namespace(NS)
                                .role(Specs.role("server").replicas(1025))
                                .build())
                        .create()))
                .isEqualTo(
                        INVALID
                                + "spec.roles[0].replicas: Invalid value: 1025: spec.roles[0].replicas in body should be less than or equal to 1024");

        Specs.Deployment eleven = Specs.deployment("good", "vLLM").namespace(NS);
        IntStream.range(0, 11).forEach(i -> eleven.role(Specs.role("r" + (char) ('a' + i))));
        assertThat(refusal(() -> client.resource(eleven.build()).create()))
                .isEqualTo(INVALID + "[spec.roles: Too many: 11: must have at most 10 items, "
                        + CrdAdmission.RULES_NOT_CHECKED + "]");
        assertThat(stored()).isNull();
    }

    @Test
    void aGoodResourcesStatusIsWrittenAndReadBack() {
        ModelDeployment md = createGood();
        md.setStatus(new ModelDeploymentStatus(1L, "Ready", "server 1/1", null, null, null, null, null, null));

        client.resource(md).patchStatus();

        ModelDeployment read = stored();
        assertThat(read.getStatus().phase()).isEqualTo("Ready");
        assertThat(read.getStatus().rolesSummary()).isEqualTo("server 1/1");
        assertThat(read.getSpec()).isEqualTo(md.getSpec());
    }
}
