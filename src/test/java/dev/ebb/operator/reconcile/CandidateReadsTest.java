package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.read.ExecResult;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.read.Reading;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The one read of each surplus candidate: started once, collected later, bounded in time, and spent by one choice. */
class CandidateReadsTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final DesiredDeployment D =
            deployment("qwen", "vLLM").role(role("server").replicas(1)).desired();
    /** A vLLM page with every gauge the engine's list names, and {@code running} requests on the first. */
    private static final String PAGE =
            "vllm:num_requests_running{model_name=\"q\"} %d\nvllm:num_requests_waiting{model_name=\"q\"} 0\n";

    private final Map<String, CompletableFuture<ExecResult>> answers = new ConcurrentHashMap<>();
    private final List<String> execs = new ArrayList<>();
    private final CandidateReads reads = new CandidateReads(new ReadLedger(new MemberReader(
            (pod, container, argv, limits) -> {
                execs.add(pod.getMetadata().getName());
                return Uni.createFrom()
                        .completionStage(answers.computeIfAbsent(
                                pod.getMetadata().getName(), name -> new CompletableFuture<>()));
            },
            new SimpleMeterRegistry())));
    private final ModelDeployment md =
            deployment("qwen", "vLLM").role(role("server").replicas(1)).build();

    private static Inventory threeReplicas() {
        List<Pod> pods = new ArrayList<>();
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            ObservedPods.replica(D, "server", ordinal, "h", true)
                    .forEach(pod -> pods.add(new PodBuilder(pod)
                            .editMetadata()
                            .withUid("uid-" + pod.getMetadata().getName())
                            .endMetadata()
                            .build()));
        }
        return Inventory.of(pods);
    }

    private void answer(String pod, int running) {
        answers.computeIfAbsent(pod, name -> new CompletableFuture<>())
                .complete(new ExecResult.Exited(0, String.format(PAGE, running).getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void eachCandidateIsReadOnceAndItsReadingIsThereOnALaterPass() {
        Inventory inventory = threeReplicas();
        List<ObservedReplica> awaiting =
                List.copyOf(inventory.replicas("server").values());

        CandidateReads.Waiting first = reads.start(md, awaiting, T0);
        reads.start(md, awaiting, T0.plusSeconds(1));
        answer("qwen-server-r0-m0", 3);
        answer("qwen-server-r1-m0", 0);

        assertThat(execs)
                .as("one read per candidate, however many passes wait")
                .containsExactlyInAnyOrder("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0");
        assertThat(first.tellNow()).as("a quick answer needs no word").isFalse();
        Map<Integer, Reading> readings =
                reads.readings(md, inventory, T0.plusSeconds(2)).get("server");
        assertThat(readings).containsOnlyKeys(0, 1).containsEntry(1, new Reading.Idle());
        assertThat(readings.get(0)).isEqualTo(new Reading.Busy(3));
    }

    @Test
    void followersLeftWithoutTheirLeaderReadAsIdleWithoutAnExecAndAReplicaNoMemberAnswersForAsUnreadable() {
        DesiredDeployment pairs = deployment("qwen", "SGLang")
                .role(role("server").replicas(2).size(2))
                .desired();
        List<Pod> pods = new ArrayList<>();
        ObservedPods.replica(pairs, "server", 0, "h", true).stream()
                .filter(p -> p.getMetadata().getName().endsWith("-m1"))
                .forEach(pods::add);
        ObservedPods.replica(pairs, "server", 1, "h", true)
                .forEach(p -> pods.add(new PodBuilder(p)
                        .editMetadata()
                        .addToLabels(Labels.MEMBER_INDEX, "1")
                        .endMetadata()
                        .build()));
        Inventory inventory = Inventory.of(pods);

        reads.start(md, List.copyOf(inventory.replicas("server").values()), T0);

        assertThat(execs).isEmpty();
        Map<Integer, Reading> readings =
                reads.readings(md, inventory, T0.plusSeconds(1)).get("server");
        assertThat(readings.get(0)).isEqualTo(new Reading.Idle());
        assertThat(readings.get(1)).isInstanceOf(Reading.Failed.class);
    }

    @Test
    void aSecondPassStillWaitingIsToldOnce() {
        List<ObservedReplica> awaiting =
                List.copyOf(threeReplicas().replicas("server").values());

        assertThat(List.of(
                        reads.start(md, awaiting, T0),
                        reads.start(md, awaiting, T0.plusSeconds(1)),
                        reads.start(md, awaiting, T0.plusSeconds(2))))
                .extracting(CandidateReads.Waiting::tellNow)
                .containsExactly(false, true, false);
        assertThat(reads.start(md, awaiting, T0.plusSeconds(3)).message())
                .contains("3 of role server")
                .contains("fewest requests in flight");
    }

    @Test
    void aReadStillOutPastItsLimitCountsAsUnreadableRatherThanStallingTheChoice() {
        Inventory inventory = threeReplicas();
        reads.start(md, List.copyOf(inventory.replicas("server").values()), T0);
        answer("qwen-server-r0-m0", 0);

        assertThat(reads.readings(md, inventory, T0.plus(CandidateReads.ANSWER_LIMIT))
                        .get("server"))
                .containsOnlyKeys(0);
        assertThat(reads.readings(
                                md,
                                inventory,
                                T0.plus(CandidateReads.ANSWER_LIMIT).plusSeconds(1))
                        .get("server"))
                .containsOnlyKeys(0, 1, 2)
                .hasEntrySatisfying(2, r -> assertThat(r).isInstanceOf(Reading.Failed.class));
    }

    @Test
    void readingsExpireAndAreSpentByTheChoiceTheyMade() {
        Inventory inventory = threeReplicas();
        reads.start(md, List.copyOf(inventory.replicas("server").values()), T0);
        List.of("qwen-server-r0-m0", "qwen-server-r1-m0", "qwen-server-r2-m0").forEach(pod -> answer(pod, 0));
        assertThat(reads.readings(md, inventory, T0.plusSeconds(1))).containsKey("server");

        assertThat(reads.readings(
                        md, inventory, T0.plus(CandidateReads.ROUND_LIFETIME).plusSeconds(1)))
                .as("too old to rank by")
                .isEmpty();

        reads.start(md, List.copyOf(inventory.replicas("server").values()), T0.plusSeconds(40));
        reads.forget(md.getMetadata().getUid());
        assertThat(reads.readings(md, inventory, T0.plusSeconds(41)))
                .as("a choice was made on them")
                .isEmpty();
    }
}
