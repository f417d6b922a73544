package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.retire.Reason;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.RoutedSimWorld;
import dev.ebb.operator.sim.SimOperator;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An autoscaler that flaps: it writes the scale subresource every 1 to 3 s, between 3 and 1 replicas, for most of a
 * minute, while clients stream completions through the router. Each scale-down goes through the retirement protocol
 * (the idlest replicas, chosen by reading what each holds, both at once); each scale-up during one calls it off and the withdrawn replica serves again
 * without a new Pod. Nothing is cut, nothing is left withdrawn, and no ordinal is created and deleted in a loop.
 *
 * <p>"In a loop" here: one replica ordinal whose Pod is deleted more than {@value #MAX_DELETIONS_PER_ORDINAL} times in
 * the run. Each deletion is paid for by a retirement that proved the replica idle (withdrawn from the router, two idle
 * reads a second apart, then its grace), which an autoscaler reversing itself every 1 to 3 s mostly calls off first; a
 * planner that refilled a withdrawn replica with a new Pod, or that deleted without the proof, would turn an ordinal
 * over at every flap down, some 14 times in the run. The counts are printed, so that a run can be quoted.
 */
class FlappingAutoscalerIT {
    private static final String NS = "flapping";
    private static final String ROLE = "server";
    private static final Duration FLAPPING = Duration.ofSeconds(40);
    private static final int HIGH = 3;
    private static final int LOW = 1;
    private static final int MAX_DELETIONS_PER_ORDINAL = 4;
    private static final Pattern ORDINAL = Pattern.compile("^qwen-server-r(\\d+)-m0$");

    @RegisterExtension
    final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");

    private final KubernetesClient client = sim.client();
    private final FakeRouter router = sim.router();
    private final Map<Integer, Set<String>> createdByOrdinal = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> deletedByOrdinal = new ConcurrentHashMap<>();
    private Watch podWatch;

    @BeforeEach
    void start() {
        podWatch = client.pods().inNamespace(NS).withLabel(Labels.ROLE, ROLE).watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                Matcher m = ORDINAL.matcher(pod.getMetadata().getName());
                if (!m.matches()) {
                    return;
                }
                int ordinal = Integer.parseInt(m.group(1));
                if (action == Action.ADDED) {
                    createdByOrdinal
                            .computeIfAbsent(ordinal, o -> ConcurrentHashMap.newKeySet())
                            .add(pod.getMetadata().getUid());
                } else if (action == Action.DELETED) {
                    deletedByOrdinal
                            .computeIfAbsent(ordinal, o -> new AtomicInteger())
                            .incrementAndGet();
                }
            }

            @Override
            public void onClose(WatcherException cause) {}
        });
    }

    @AfterEach
    void stop() {
        podWatch.close();
    }

    private Optional<ModelDeploymentStatus> status() {
        return Optional.ofNullable(client.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("qwen")
                        .get())
                .map(ModelDeployment::getStatus);
    }

    private List<Pod> servers() {
        return client.pods().inNamespace(NS).withLabel(Labels.ROLE, ROLE).list().getItems();
    }

    /** What an HPA does: read the Scale, set its replicas, write it back; a write lost to a newer version is tried again. */
    private void autoscalerWrites(int replicas) {
        await().atMost(Duration.ofSeconds(10))
                .ignoreExceptionsInstanceOf(KubernetesClientException.class)
                .until(() -> client.resources(ModelDeployment.class)
                                .inNamespace(NS)
                                .withName("qwen")
                                .scale(replicas)
                        != null);
    }

    private boolean settledAt(int replicas) {
        List<Pod> pods = servers();
        List<RetirementStatus> retirements =
                status().map(ModelDeploymentStatus::retirements).orElse(List.of());
        return pods.size() == replicas
                && pods.stream()
                        .allMatch(p -> p.getMetadata().getDeletionTimestamp() == null
                                && Labels.SERVING_YES.equals(
                                        p.getMetadata().getLabels().get(Labels.SERVING)))
                && pods.stream().allMatch(p -> router.selects(p.getMetadata().getName()))
                && retirements.stream().allMatch(r -> "Aborted".equals(r.state()))
                && status().map(ModelDeploymentStatus::scaling)
                        .filter(s -> s.replicas() == replicas)
                        .isPresent();
    }

    private long events(Predicate<String> reason) {
        return RecordedEvents.occurrences(client, NS).stream()
                .map(Event::getReason)
                .filter(reason)
                .count();
    }

    @Test
    void aFlappingAutoscalerUnderLoadCutsNothingLeavesNothingWithdrawnAndTurnsNoOrdinalOverInALoop() throws Exception {
        SimOperator operator = new SimOperator(client, sim.exec(), sim.routers());
        LoadGenerator load = null;
        try {
            client.resource(deployment("qwen", "vLLM")
                            .namespace(NS)
                            .router("llm-d-router")
                            .scaling(ROLE, HIGH)
                            .role(role(ROLE).replicas(HIGH))
                            .build())
                    .create();
            await().atMost(Duration.ofSeconds(30)).until(() -> settledAt(HIGH));
            Set<String> initial =
                    servers().stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());

            // streams of 0.5 to 2.5 s, three at a time through the router's client entry
            Random lengths = new Random(7);
            load = new LoadGenerator(router, 3, () -> 10 + lengths.nextInt(41), Duration.ofMillis(50))
                    .start(FLAPPING.plusSeconds(30));

            // what status shows while it flaps: how many retirements run at once, and why each replica was chosen
            AtomicInteger mostAtOnce = new AtomicInteger();
            Set<String> choices = ConcurrentHashMap.newKeySet();
            ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor();
            watcher.scheduleWithFixedDelay(
                    () -> {
                        List<RetirementStatus> underWay =
                                status().map(ModelDeploymentStatus::retirements).orElse(List.of()).stream()
                                        .filter(r -> !"Aborted".equals(r.state()))
                                        .toList();
                        mostAtOnce.accumulateAndGet(underWay.size(), Math::max);
                        underWay.forEach(r -> choices.add(r.chosenBecause() == null ? "" : r.chosenBecause()));
                    },
                    0,
                    200,
                    TimeUnit.MILLISECONDS);

            Random autoscaler = new Random(42);
            int writes = 0;
            int replicas = HIGH;
            Instant until = Instant.now().plus(FLAPPING);
            while (Instant.now().isBefore(until)) {
                Thread.sleep(1000 + autoscaler.nextInt(2001));
                replicas = replicas == HIGH ? LOW : HIGH;
                autoscalerWrites(replicas);
                writes++;
            }
            int last = replicas;
            await().atMost(Duration.ofSeconds(30)).until(() -> settledAt(last));
            watcher.shutdownNow();
            load.stop(Duration.ofSeconds(15));

            long started = events(Reason.STARTED.wire()::equals);
            long cancelled = events(Reason.NO_LONGER_WANTED.wire()::equals);
            long completed = events(Reason.COMPLETED.wire()::equals);
            long otherAborts = status().map(ModelDeploymentStatus::abortedRetirements)
                    .map(List::size)
                    .orElse(0);
            long createdLater = createdByOrdinal.values().stream()
                    .flatMap(Set::stream)
                    .filter(uid -> !initial.contains(uid))
                    .count();
            Map<Integer, Integer> deletions = new TreeMap<>();
            deletedByOrdinal.forEach((ordinal, count) -> deletions.put(ordinal, count.get()));
            System.out.printf(
                    "flapping autoscaler: %d scale writes (%d..%d) in %ds; retirements started %d, called off %d, completed %d,"
                            + " aborted otherwise %d; Pods created after the start %d, deletions by ordinal %s; requests completed %d, cut %d,"
                            + " rejected %d; at most %d retirements at once; chosen because, e.g. %s%n",
                    writes,
                    LOW,
                    HIGH,
                    FLAPPING.toSeconds(),
                    started,
                    cancelled,
                    completed,
                    otherAborts,
                    createdLater,
                    deletions,
                    load.count(LoadGenerator.Outcome.COMPLETED),
                    load.count(LoadGenerator.Outcome.CUT),
                    load.count(LoadGenerator.Outcome.REJECTED),
                    mostAtOnce.get(),
                    choices.stream().limit(3).toList());

            assertThat(load.requests())
                    .filteredOn(r -> r.outcome() == LoadGenerator.Outcome.CUT)
                    .as("cut requests")
                    .isEmpty();
            assertThat(load.count(LoadGenerator.Outcome.COMPLETED)).isPositive();
            assertThat(servers())
                    .as("no Pod left withdrawn")
                    .allSatisfy(p ->
                            assertThat(p.getMetadata().getLabels()).containsEntry(Labels.SERVING, Labels.SERVING_YES));
            assertThat(writes).as("writes, each 1 to 3 s after the last").isGreaterThanOrEqualTo(13);
            assertThat(started).as("the scale-downs went through the protocol").isPositive();
            assertThat(mostAtOnce.get())
                    .as("a scale-down by two retires both at once")
                    .isEqualTo(HIGH - LOW);
            assertThat(choices)
                    .as("each chosen by a reading of what it held")
                    .isNotEmpty()
                    .allSatisfy(why -> assertThat(why).startsWith("in flight "));
            assertThat(cancelled).as("scale-ups called retirements off").isPositive();
            assertThat(createdLater)
                    .as("a Pod is created only for a replica a completed retirement deleted")
                    .isLessThanOrEqualTo(completed);
            assertThat(deletions.values())
                    .as("deletions per ordinal")
                    .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(MAX_DELETIONS_PER_ORDINAL));
            assertThat(otherAborts)
                    .as("no retirement aborted for any reason but the flapping")
                    .isZero();
        } finally {
            if (load != null) {
                load.close();
            }
            operator.close();
        }
    }
}
