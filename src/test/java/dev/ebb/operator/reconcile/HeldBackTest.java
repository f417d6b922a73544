package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeldBackTest {
    private static final Instant NOW = Instant.parse("2026-12-03T10:00:00Z");

    private static Pod pod(String name) {
        return new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .endSpec()
                .build();
    }

    private static Pod withUntil(Pod pod, String until) {
        return new PodBuilder(pod)
                .editMetadata()
                .addToAnnotations(HeldBack.UNTIL, until)
                .endMetadata()
                .build();
    }

    @Test
    void aHeldBackPodCarriesTheGateAndWhenItIsLifted() {
        Pod gated = HeldBack.gated(pod("a"), NOW.plusSeconds(900));

        assertThat(gated.getSpec().getSchedulingGates())
                .extracting(g -> g.getName())
                .containsExactly("serving.ebb.dev/held-back");
        assertThat(gated.getMetadata().getAnnotations())
                .containsEntry("serving.ebb.dev/held-back-until", "2026-12-03T10:15:00Z");
        assertThat(HeldBack.isGated(gated)).isTrue();
        assertThat(HeldBack.isGated(pod("b"))).isFalse();
    }

    @Test
    void theGateIsLiftedWhenItsTimeHasComeAndNotBefore() {
        Pod early = HeldBack.gated(pod("early"), NOW.plusSeconds(30));
        Pod due = HeldBack.gated(pod("due"), NOW);
        Pod ungated = withUntil(pod("ungated"), NOW.minusSeconds(5).toString());

        assertThat(HeldBack.due(List.of(early, due, ungated), NOW))
                .extracting(p -> p.getMetadata().getName())
                .containsExactly("due");
        assertThat(HeldBack.nextIn(List.of(early, due, ungated), NOW)).contains(Duration.ofSeconds(30));
    }

    @Test
    void aGateWhoseEndCannotBeReadIsLiftedRatherThanKeptForEver() {
        Pod unreadable = withUntil(HeldBack.gated(pod("unreadable"), NOW.plusSeconds(30)), "tomorrow");
        Pod oversized = withUntil(
                HeldBack.gated(pod("oversized"), NOW.plusSeconds(30)), "2026-12-03T10:00:30Z" + " ".repeat(100_000));
        Pod missing = new PodBuilder(HeldBack.gated(pod("missing"), NOW.plusSeconds(30)))
                .editMetadata()
                .withAnnotations(null)
                .endMetadata()
                .build();

        assertThat(HeldBack.due(List.of(unreadable, oversized, missing), NOW)).hasSize(3);
        assertThat(HeldBack.nextIn(List.of(unreadable, oversized, missing), NOW))
                .isEmpty();
    }

    @Test
    void liftingTheGateKeepsEveryOtherGate() {
        Pod gated = new PodBuilder(HeldBack.gated(pod("a"), NOW))
                .editSpec()
                .addNewSchedulingGate()
                .withName("kueue.x-k8s.io/admission")
                .endSchedulingGate()
                .endSpec()
                .build();

        assertThat(HeldBack.lifted(gated).getSpec().getSchedulingGates())
                .extracting(g -> g.getName())
                .containsExactly("kueue.x-k8s.io/admission");
    }

    @Test
    void aPodIsCreatedBehindTheGateOnlyWhileItsReplicaIsHeldBack() {
        Pod member = new PodBuilder(pod("big-tp-r0-m1"))
                .editMetadata()
                .withLabels(Map.of(Labels.ROLE, "tp", Labels.REPLICA, "0"))
                .endMetadata()
                .build();
        Map<String, Instant> released = Map.of(HeldBack.replicaKey("tp", 0), NOW.plusSeconds(60));

        assertThat(HeldBack.isGated(HeldBack.asCreated(member, released, NOW))).isTrue();
        assertThat(HeldBack.isGated(HeldBack.asCreated(member, released, NOW.plusSeconds(60))))
                .as("its time come")
                .isFalse();
        assertThat(HeldBack.isGated(
                        HeldBack.asCreated(member, Map.of(HeldBack.replicaKey("tp", 1), NOW.plusSeconds(60)), NOW)))
                .as("another replica held back")
                .isFalse();
    }
}
