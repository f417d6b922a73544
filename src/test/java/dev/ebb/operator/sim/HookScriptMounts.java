package dev.ebb.operator.sim;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;

/**
 * For tests that create rendered Pods without the operator: the hook ConfigMap a Pod mounts, with this release's script,
 * as the operator creates it before its Pods.
 */
public final class HookScriptMounts {
    private HookScriptMounts() {}

    public static Pod provide(KubernetesClient client, Pod pod) {
        PodRenderer.hookConfigMapOf(pod).ifPresent(name -> {
            try {
                client.resource(new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .withNamespace(pod.getMetadata().getNamespace())
                                .withLabels(Map.of(Labels.DRAIN_HOOK_REVISION, DrainHook.REVISION))
                                .endMetadata()
                                .withImmutable(true)
                                .withData(Map.of(DrainHook.FILE, DrainHook.SCRIPT))
                                .build())
                        .create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        });
        return pod;
    }
}
