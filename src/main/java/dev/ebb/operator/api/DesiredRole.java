package dev.ebb.operator.api;

import dev.ebb.operator.api.v1alpha1.NodeMaintenance;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RoleTemplate;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Toleration;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One role with its defaults resolved. {@code grace} stays empty when the role sets none, because a take-over
 * role then keeps the Kubernetes default rather than the operator's.
 *
 * @param defaultImage whether {@code image} is the operator's default, the role and spec.engine naming none
 * @param drainBudget how long a retirement of one of its replicas may spend proving it idle
 * @param maxSurge replicas a rollout may add beyond {@code replicas} while it replaces them: 0 or 1
 * @param template what the role's Pods and engine container carry beyond what the operator renders
 * @param sharedMemory the size of the memory-backed /dev/shm, if any
 * @param startupSeconds how long the engine may load before the kubelet restarts it
 * @param livenessSeconds how long a loaded engine may leave its health unanswered before the kubelet restarts it; none
 *     when empty
 * @param partialPlacement how long a replica may hold the members placed while the rest cannot be, before it is
 *     deleted and held back as long; the Pods do not carry it
 * @param maxUnavailable replicas an eviction may take from the role at once
 * @param nodeMaintenance whether the role's Pods refuse eviction and are moved through the protocol, or are evicted
 */
public record DesiredRole(
        String name,
        RoleKind kind,
        int replicas,
        int size,
        String image,
        boolean defaultImage,
        int port,
        Optional<ResourceRequirements> resources,
        List<String> extraArgs,
        List<EnvVar> env,
        List<String> command,
        Optional<Integer> grace,
        Map<String, String> nodeSelector,
        List<Toleration> tolerations,
        Duration drainBudget,
        int maxSurge,
        RoleTemplate template,
        Setting<String> sharedMemory,
        Setting<Integer> startupSeconds,
        Optional<Integer> livenessSeconds,
        Duration partialPlacement,
        int maxUnavailable,
        NodeMaintenance nodeMaintenance) {

    /**
     * A value the spec set, or the operator's default for it. Defaults stay out of the configuration hash, so a
     * release that brings a new one turns over no replica.
     *
     * @param value empty for none
     */
    public record Setting<T>(Optional<T> value, boolean defaulted) {
        public static <T> Setting<T> set(Optional<T> value) {
            return new Setting<>(value, false);
        }

        public static <T> Setting<T> byDefault(Optional<T> value) {
            return new Setting<>(value, true);
        }
    }

    /** The same role as it would be had it named no image and taken {@code image} as the operator's default. */
    public DesiredRole onDefaultImage() {
        return new DesiredRole(
                name,
                kind,
                replicas,
                size,
                image,
                true,
                port,
                resources,
                extraArgs,
                env,
                command,
                grace,
                nodeSelector,
                tolerations,
                drainBudget,
                maxSurge,
                template,
                sharedMemory,
                startupSeconds,
                livenessSeconds,
                partialPlacement,
                maxUnavailable,
                nodeMaintenance);
    }

    /** The same role at another replica count. */
    public DesiredRole withReplicas(int count) {
        return new DesiredRole(
                name,
                kind,
                count,
                size,
                image,
                defaultImage,
                port,
                resources,
                extraArgs,
                env,
                command,
                grace,
                nodeSelector,
                tolerations,
                drainBudget,
                maxSurge,
                template,
                sharedMemory,
                startupSeconds,
                livenessSeconds,
                partialPlacement,
                maxUnavailable,
                nodeMaintenance);
    }

    /** A take-over role replaces the whole command line, so the operator cannot know what serves where. */
    public boolean takeOver() {
        return !command.isEmpty();
    }
}
