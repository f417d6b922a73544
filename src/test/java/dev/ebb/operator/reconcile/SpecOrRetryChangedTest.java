package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class SpecOrRetryChangedTest {
    private final SpecOrRetryChanged filter = new SpecOrRetryChanged();

    private static ModelDeployment md(Consumer<ModelDeployment> change) {
        ModelDeployment md = deployment("qwen", "vLLM").role(role("server")).build();
        md.getMetadata().setGeneration(3L);
        change.accept(md);
        return md;
    }

    @Test
    void theOperatorsOwnStatusWriteStartsNoPass() {
        assertThat(filter.accept(
                        md(m -> m.getMetadata().setResourceVersion("9")),
                        md(m -> m.getMetadata().setResourceVersion("8"))))
                .isFalse();
    }

    @Test
    void aSpecEditStartsAPass() {
        assertThat(filter.accept(md(m -> m.getMetadata().setGeneration(4L)), md(m -> {})))
                .isTrue();
    }

    @Test
    void aNewRetryTokenStartsAPassAndAnUnrelatedAnnotationDoesNot() {
        ModelDeployment before = md(m -> {});
        assertThat(filter.accept(
                        md(m -> m.getMetadata().setAnnotations(Map.of(Annotations.RETRY_RETIREMENT, "t1"))), before))
                .isTrue();
        assertThat(filter.accept(md(m -> m.getMetadata().setAnnotations(Map.of("team", "a"))), before))
                .isFalse();
    }

    @Test
    void aNewRefreshTokenStartsAPass() {
        ModelDeployment before = md(m -> m.getMetadata().setAnnotations(Map.of(Annotations.REFRESH_HOOKS, "t1")));
        assertThat(filter.accept(
                        md(m -> m.getMetadata().setAnnotations(Map.of(Annotations.REFRESH_HOOKS, "t2"))), before))
                .isTrue();
        assertThat(filter.accept(
                        md(m -> m.getMetadata().setAnnotations(Map.of(Annotations.REFRESH_HOOKS, "t1"))), before))
                .isFalse();
    }

    @Test
    void deletionAndFinalizersStartAPass() {
        ModelDeployment before = md(m -> {});
        assertThat(filter.accept(md(m -> m.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z")), before))
                .isTrue();
        assertThat(filter.accept(md(m -> m.getMetadata().setFinalizers(List.of("x"))), before))
                .isTrue();
    }
}
