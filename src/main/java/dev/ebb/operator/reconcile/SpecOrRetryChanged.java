package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.util.Map;
import java.util.Objects;

/**
 * Which changes to a ModelDeployment start a pass: the spec (a new generation), the retry and refresh annotations (a
 * user asking for an aborted retirement again, or for replicas behind the operator to be replaced, which change no
 * generation), and deletion. The operator's own status writes do not.
 */
public class SpecOrRetryChanged implements OnUpdateFilter<ModelDeployment> {
    @Override
    public boolean accept(ModelDeployment now, ModelDeployment before) {
        return !Objects.equals(
                        now.getMetadata().getGeneration(), before.getMetadata().getGeneration())
                || !Objects.equals(
                        annotation(now, Annotations.RETRY_RETIREMENT), annotation(before, Annotations.RETRY_RETIREMENT))
                || !Objects.equals(
                        annotation(now, Annotations.REFRESH_HOOKS), annotation(before, Annotations.REFRESH_HOOKS))
                || !Objects.equals(
                        now.getMetadata().getDeletionTimestamp(),
                        before.getMetadata().getDeletionTimestamp())
                || !Objects.equals(
                        now.getMetadata().getFinalizers(), before.getMetadata().getFinalizers());
    }

    private static String annotation(ModelDeployment md, String key) {
        Map<String, String> annotations = md.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(key);
    }
}
