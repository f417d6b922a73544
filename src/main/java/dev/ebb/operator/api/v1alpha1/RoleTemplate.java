package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.util.List;
import java.util.Map;

/**
 * What a role's Pods carry beyond what the operator renders, in the manner of Strimzi's {@code template} sections: the
 * Pod's own settings and the engine container's. The command line, the drain hook, the grace, the ports, the probes
 * and the operator's labels stay the operator's and cannot be set here. Every field enters the role's configuration
 * hash, so a change rolls through the retirement protocol one replica at a time.
 */
public record RoleTemplate(
        @JsonPropertyDescription("Settings of every Pod of the role.")
        PodTemplate pod,

        @JsonPropertyDescription("Settings of the engine container of every Pod of the role.")
        EngineContainerTemplate engineContainer) {

    public static final String RESERVED_PREFIX = "serving.ebb.dev/";
    /** The volume the operator mounts at /dev/shm. */
    public static final String SHARED_MEMORY_VOLUME = "ebb-shm";

    public static final String SHARED_MEMORY_PATH = "/dev/shm";
    /** The volume of the drain hook's ConfigMap. */
    public static final String DRAIN_HOOK_VOLUME = "ebb-drain-hook";

    public static final int MAX_ITEMS = 64;
    public static final String RESERVED_LABEL = "spec.roles[].template.pod.metadata.labels must not use the prefix "
            + RESERVED_PREFIX + ": the operator's own labels (serving, replica, configuration hash) take it";
    public static final String RESERVED_ANNOTATION =
            "spec.roles[].template.pod.metadata.annotations must not use the prefix " + RESERVED_PREFIX
                    + ": the operator's own annotations take it";
    public static final String RESERVED_VOLUME =
            "spec.roles[].template.pod.volumes must not name a volume " + SHARED_MEMORY_VOLUME + " or "
                    + DRAIN_HOOK_VOLUME + ": the operator's shared memory and drain hook volumes take those names";
    public static final String SHARED_MEMORY_MOUNT =
            "spec.roles[].template.engineContainer.volumeMounts must not mount " + SHARED_MEMORY_PATH
                    + ": set its size with spec.roles[].sharedMemory";

    /** Labels and annotations added to every Pod of the role; the operator's own take precedence and a prefix. */
    @ValidationRule(
            value = "!has(self.labels) || !self.labels.exists(k, k.startsWith('" + RESERVED_PREFIX + "'))",
            message = RESERVED_LABEL,
            fieldPath = ".labels")
    @ValidationRule(
            value = "!has(self.annotations) || !self.annotations.exists(k, k.startsWith('" + RESERVED_PREFIX + "'))",
            message = RESERVED_ANNOTATION,
            fieldPath = ".annotations")
    public record Metadata(
            @Size(max = MAX_ITEMS) Map<String, String> labels,
            @Size(max = MAX_ITEMS) Map<String, String> annotations) {}

    @ValidationRule(
            value = "!has(self.volumes) || !self.volumes.exists(v, v.name == '" + SHARED_MEMORY_VOLUME
                    + "' || v.name == '" + DRAIN_HOOK_VOLUME + "')",
            message = RESERVED_VOLUME,
            fieldPath = ".volumes")
    public record PodTemplate(
            @JsonPropertyDescription("Labels and annotations of every Pod, e.g. a Kueue queue name.")
            Metadata metadata,

            @Size(max = MAX_ITEMS)
            @JsonPropertyDescription(
                    "Volumes the engine container may mount: the model's weights on a PVC, a model cache, a CSI or image volume.")
            List<Volume> volumes,

            @Size(max = 253)
            @JsonPropertyDescription(
                    "The Pods' ServiceAccount, e.g. one with a cloud identity that reads weights from a bucket.")
            String serviceAccountName,

            @Size(max = MAX_ITEMS) List<LocalObjectReference> imagePullSecrets,
            Affinity affinity,
            @Size(max = MAX_ITEMS) List<TopologySpreadConstraint> topologySpreadConstraints,
            @Size(max = 253) String priorityClassName,
            @Size(max = 253) String runtimeClassName,
            @Size(max = 253) String schedulerName,
            PodSecurityContext securityContext) {}

    @ValidationRule(
            value = "!has(self.volumeMounts) || !self.volumeMounts.exists(m, m.mountPath == '" + SHARED_MEMORY_PATH
                    + "')",
            message = SHARED_MEMORY_MOUNT,
            fieldPath = ".volumeMounts")
    public record EngineContainerTemplate(
            @Size(max = MAX_ITEMS) List<VolumeMount> volumeMounts,

            @Size(max = MAX_ITEMS)
            @JsonPropertyDescription("Environment taken whole from ConfigMaps and Secrets, e.g. HF_TOKEN.")
            List<EnvFromSource> envFrom,

            SecurityContext securityContext) {}
}
