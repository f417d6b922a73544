package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class HookScriptsTest {
    private static final ConfigMap CURRENT = script("qwen-drain-hook-new", true);
    private static final ConfigMap OLDER = script("qwen-drain-hook-old", true);
    private static final ConfigMap ROUTER_CONFIG = script("qwen-router", false);

    private static ConfigMap script(String name, boolean hook) {
        return new ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels(Labels.DEPLOYMENT, "qwen")
                .addToLabels(hook ? Labels.DRAIN_HOOK_REVISION : "other", "x")
                .endMetadata()
                .build();
    }

    private static Pod mounting(String configMap) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("p-" + configMap)
                .endMetadata()
                .withNewSpec()
                .addNewVolume()
                .withName(PodRenderer.DRAIN_HOOK_VOLUME)
                .withNewConfigMap()
                .withName(configMap)
                .endConfigMap()
                .endVolume()
                .endSpec()
                .build();
    }

    private static final Pod INLINE_HOOK = new PodBuilder()
            .withNewMetadata()
            .withName("older-release")
            .endMetadata()
            .withNewSpec()
            .endSpec()
            .build();

    record Case(
            String name,
            Optional<ConfigMap> desired,
            List<ConfigMap> existing,
            List<Pod> pods,
            Optional<String> create,
            boolean restored,
            List<String> delete) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "a new deployment: its script is created before any Pod",
                        Optional.of(CURRENT),
                        List.of(),
                        List.of(),
                        Optional.of(CURRENT.getMetadata().getName()),
                        false,
                        List.of()),
                new Case(
                        "deleted by hand while Pods mount it: put back, and said so",
                        Optional.of(CURRENT),
                        List.of(),
                        List.of(mounting(CURRENT.getMetadata().getName())),
                        Optional.of(CURRENT.getMetadata().getName()),
                        true,
                        List.of()),
                new Case(
                        "there already: nothing to do",
                        Optional.of(CURRENT),
                        List.of(CURRENT),
                        List.of(mounting(CURRENT.getMetadata().getName())),
                        Optional.empty(),
                        false,
                        List.of()),
                new Case(
                        "an older revision a Pod still mounts stays",
                        Optional.of(CURRENT),
                        List.of(CURRENT, OLDER),
                        List.of(mounting(OLDER.getMetadata().getName())),
                        Optional.empty(),
                        false,
                        List.of()),
                new Case(
                        "an older revision no Pod mounts goes",
                        Optional.of(CURRENT),
                        List.of(CURRENT, OLDER),
                        List.of(INLINE_HOOK),
                        Optional.empty(),
                        false,
                        List.of(OLDER.getMetadata().getName())),
                new Case(
                        "no role hooked any more: every unmounted script goes",
                        Optional.empty(),
                        List.of(CURRENT, OLDER),
                        List.of(mounting(OLDER.getMetadata().getName())),
                        Optional.empty(),
                        false,
                        List.of(CURRENT.getMetadata().getName())),
                new Case(
                        "the router's ConfigMaps are not the hook's to remove",
                        Optional.of(CURRENT),
                        List.of(CURRENT, ROUTER_CONFIG),
                        List.of(),
                        Optional.empty(),
                        false,
                        List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void plan(Case c) {
        HookScripts.Plan plan = HookScripts.plan(c.desired(), c.existing(), c.pods());

        assertThat(plan.create().map(m -> m.getMetadata().getName()))
                .as("created")
                .isEqualTo(c.create());
        assertThat(plan.restored()).as("restored").isEqualTo(c.restored());
        assertThat(plan.delete())
                .extracting(m -> m.getMetadata().getName())
                .as("deleted")
                .isEqualTo(c.delete());
    }
}
