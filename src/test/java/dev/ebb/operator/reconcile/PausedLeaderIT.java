package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.sim.ProcessPause;
import dev.ebb.operator.sim.RoutedSimWorld;
import dev.ebb.operator.sim.SimOperator;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A leader paused past its Lease in the middle of a scale-down, while a standby takes over and, the scale-down having
 * been undone meanwhile, keeps the replica. Resumed, the paused one finishes the pass it was in: nothing it decided
 * before the pause may reach the cluster. The pause holds every request the paused operator sends and its own end on
 * the lost Lease, which it is let reach only after its resumed pass has had every chance to act.
 */
class PausedLeaderIT {
    private static final String NS = "paused";
    private static final String LEASE_NAMESPACE = "ebb-system";
    private static final String LEASE = "ebb-operator";
    /** A Lease of the SDK's 15 s, its standby's retry period and jitter. */
    private static final Duration TAKE_OVER = Duration.ofSeconds(40);
    /** How long the resumed operator is watched for anything it should not send. */
    private static final Duration AFTER_RESUME = Duration.ofSeconds(5);

    @RegisterExtension
    final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");

    private final KubernetesClient client = sim.client();
    private SimOperator paused;
    private SimOperator standby;

    @BeforeEach
    void start() throws java.io.IOException {
        // the operators check their RBAC before electing, as the deployed one does
        sim.apiServer().grant(PackagedOperator.packagedRules());
        paused = SimOperator.electing(client, sim.exec(), sim.routers(), LEASE_NAMESPACE, "ebb-operator-a");
        await().atMost(Duration.ofSeconds(20))
                .until(() -> holder().filter("ebb-operator-a"::equals).isPresent());
        standby = SimOperator.electing(client, sim.exec(), sim.routers(), LEASE_NAMESPACE, "ebb-operator-b");
        client.resource(deployment("qwen", "vLLM")
                        .namespace(NS)
                        .role(role("server").replicas(2))
                        .build())
                .create();
        await().atMost(Duration.ofSeconds(30)).until(() -> servingPods().size() == 2);
    }

    @AfterEach
    void stop() {
        Stream.of(paused, standby).filter(Objects::nonNull).forEach(SimOperator::close);
    }

    @Test
    void aStatusDecidedBeforeThePauseIsRefusedAndItsDeleteNeverSent() throws InterruptedException {
        // paused as it is about to record that the replica is proven idle and goes
        paused.pause().freezeAt(statusWrite("\"Deleting\""));
        Specs.scale(client, NS, "qwen", "server", 1);
        assertThat(paused.pause().awaitFrozen(Duration.ofSeconds(60))).isTrue();

        Pod target = keptByTheNewLeader();
        paused.pause().thaw();

        assertNothingStaleFollows(target);
        assertThat(paused.pause().answeredSinceThaw())
                .as("the status decided before the pause, refused")
                .filteredOn(answer -> answer.path().endsWith("/modeldeployments/qwen/status"))
                .first()
                .isEqualTo(new ProcessPause.Answered(
                        "PUT",
                        "/apis/serving.ebb.dev/v1alpha1/namespaces/" + NS + "/modeldeployments/qwen/status",
                        409));
    }

    @Test
    void anActionDecidedAndRecordedBeforeThePauseIsDroppedOnTheLeaseFoundLost() throws InterruptedException {
        // paused just after recording that the replica leaves traffic, before taking it out
        paused.pause().freezeAfter(statusWrite("\"Withdrawing\""));
        Specs.scale(client, NS, "qwen", "server", 1);
        assertThat(paused.pause().awaitFrozen(Duration.ofSeconds(60))).isTrue();

        Pod target = keptByTheNewLeader();
        paused.pause().thaw();

        assertNothingStaleFollows(target);
        assertThat(paused.pause().sentSinceThaw())
                .as("the Lease was read before anything was taken away")
                .anyMatch(sent -> sent.method().equals("GET") && sent.path().endsWith("/leases/" + LEASE));
    }

    /**
     * While the leader is paused the scale-down is undone and the standby takes over: it calls the retirement off and
     * the replica serves on. Returns the replica's Pod.
     */
    private Pod keptByTheNewLeader() {
        RetirementStatus retiring = retirements().stream().findFirst().orElseThrow();
        String name = retiring.targetMembers().get(0).name();
        Specs.scale(client, NS, "qwen", "server", 2);
        await().atMost(TAKE_OVER)
                .until(() -> holder().filter("ebb-operator-b"::equals).isPresent());
        await().atMost(Duration.ofSeconds(20))
                .until(() -> retirements().stream().noneMatch(r -> !"Aborted".equals(r.state()))
                        && servingPods().stream()
                                .anyMatch(p -> p.getMetadata().getName().equals(name)));
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private void assertNothingStaleFollows(Pod target) {
        List<String> servingSeen = new CopyOnWriteArrayList<>();
        try (Watch watch = client.pods()
                .inNamespace(NS)
                .withName(target.getMetadata().getName())
                .watch(new Watcher<>() {
                    @Override
                    public void eventReceived(Watcher.Action action, Pod pod) {
                        servingSeen.add(
                                action + " " + pod.getMetadata().getLabels().get(Labels.SERVING)
                                        + (pod.getMetadata().getDeletionTimestamp() == null ? "" : " deleting"));
                    }

                    @Override
                    public void onClose(WatcherException cause) {}
                })) {
            await().during(AFTER_RESUME).atMost(AFTER_RESUME.plusSeconds(5)).until(() -> {
                Pod now = client.pods()
                        .inNamespace(NS)
                        .withName(target.getMetadata().getName())
                        .get();
                return now != null
                        && Objects.equals(
                                now.getMetadata().getUid(), target.getMetadata().getUid())
                        && now.getMetadata().getDeletionTimestamp() == null
                        && Labels.SERVING_YES.equals(
                                now.getMetadata().getLabels().get(Labels.SERVING))
                        && retirements().stream().noneMatch(r -> !"Aborted".equals(r.state()));
            });
        }
        assertThat(servingSeen)
                .as("the replica never left traffic after the new leader kept it")
                .noneMatch(seen -> !seen.contains(" true"));
        assertThat(paused.pause().sentSinceThaw())
                .as("nothing taken away by the deposed leader")
                .noneMatch(sent -> sent.method().equals("DELETE"))
                .noneMatch(sent ->
                        sent.path().endsWith("/pods/" + target.getMetadata().getName())
                                && !sent.method().equals("GET"));
        paused.pause().endHeldHalt();
    }

    private static Predicate<HttpRequest> statusWrite(String containing) {
        return request -> !request.method().equals("GET")
                && request.uri().getPath().endsWith("/modeldeployments/qwen/status")
                && Optional.ofNullable(request.bodyString())
                        .filter(body -> body.contains(containing))
                        .isPresent();
    }

    private List<RetirementStatus> retirements() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(NS)
                .withName("qwen")
                .get();
        return md == null || md.getStatus() == null || md.getStatus().retirements() == null
                ? List.of()
                : md.getStatus().retirements();
    }

    private List<Pod> servingPods() {
        return client.pods().inNamespace(NS).withLabel(Labels.SERVING, Labels.SERVING_YES).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> p.getStatus() != null
                        && p.getStatus().getConditions() != null
                        && p.getStatus().getConditions().stream()
                                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())))
                .toList();
    }

    private Optional<String> holder() {
        return Optional.ofNullable(client.leases()
                        .inNamespace(LEASE_NAMESPACE)
                        .withName(LEASE)
                        .get())
                .map(Lease::getSpec)
                .map(s -> s.getHolderIdentity());
    }
}
