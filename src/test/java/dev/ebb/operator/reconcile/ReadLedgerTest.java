package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.ExecResult;
import dev.ebb.operator.read.MemberReader;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Several retirements of one deployment read their members at once; each collects its own reads and nothing else. */
class ReadLedgerTest {
    private static final ReadLedger.Operation FIRST =
            new ReadLedger.Operation("uid-qwen", "server/2@2026-01-01T00:00:00Z");
    private static final ReadLedger.Operation SECOND =
            new ReadLedger.Operation("uid-qwen", "server/3@2026-01-01T00:00:00Z");

    /** Per Pod name, the exec answer the test releases when it likes. */
    private final Map<String, CompletableFuture<ExecResult>> answers = new ConcurrentHashMap<>();

    private final AtomicInteger execs = new AtomicInteger();
    private final ReadLedger ledger = new ReadLedger(new MemberReader(
            (pod, container, argv, limits) -> {
                execs.incrementAndGet();
                return Uni.createFrom()
                        .completionStage(answers.computeIfAbsent(
                                pod.getMetadata().getName(), name -> new CompletableFuture<>()));
            },
            new SimpleMeterRegistry()));

    private static Pod pod(String name) {
        return new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("ns")
                .withUid("uid-" + name)
                .addToAnnotations("prometheus.io/port", "8000")
                .endMetadata()
                .build();
    }

    private void answer(String pod) {
        answers.computeIfAbsent(pod, name -> new CompletableFuture<>())
                .complete(new ExecResult.Failed("no engine here"));
    }

    @Test
    void twoRetirementsOfOneDeploymentEachCollectTheirOwnReads() {
        answer("r2");
        answer("r3");
        ledger.start(FIRST, pod("r2"), Engine.VLLM, Optional.empty());
        ledger.start(SECOND, pod("r3"), Engine.VLLM, Optional.empty());

        assertThat(ledger.collect(FIRST)).containsOnlyKeys("r2");
        assertThat(ledger.collect(SECOND))
                .as("the first collect left the second's read alone")
                .containsOnlyKeys("r3");
        assertThat(ledger.collect(FIRST)).as("each read is handed out once").isEmpty();
    }

    @Test
    void aReadThatLandsAfterItsRetirementEndedIsDropped() {
        ledger.start(FIRST, pod("r2"), Engine.VLLM, Optional.empty());
        ledger.forget(FIRST);
        answer("r2");

        assertThat(ledger.collect(FIRST)).isEmpty();
    }

    @Test
    void aMemberStillBeingReadIsNotReadAgainForTheSameRetirement() {
        ledger.start(FIRST, pod("r2"), Engine.VLLM, Optional.empty());
        ledger.start(FIRST, pod("r2"), Engine.VLLM, Optional.empty());
        answer("r2");

        assertThat(execs).hasValue(1);
        assertThat(ledger.collect(FIRST)).containsOnlyKeys("r2");
    }
}
