package dev.ebb.operator;

import dev.ebb.operator.api.v1alpha1.RoleTemplate;
import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.EnvFromSourceBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import java.util.List;
import java.util.Map;

/** Role templates as a user writes them: one that sets every field, and ones that break a rule. */
public final class RoleTemplates {
    private RoleTemplates() {}

    /** Weights from a PVC at /models, HF_TOKEN from a Secret, Kueue's queue label, a pull secret, identity and scheduling. */
    public static RoleTemplate full() {
        return new RoleTemplate(
                new RoleTemplate.PodTemplate(
                        new RoleTemplate.Metadata(
                                Map.of("kueue.x-k8s.io/queue-name", "team-a"), Map.of("example.com/owner", "team-a")),
                        List.of(new VolumeBuilder()
                                .withName("weights")
                                .withNewPersistentVolumeClaim()
                                .withClaimName("deepseek-v3")
                                .withReadOnly(true)
                                .endPersistentVolumeClaim()
                                .build()),
                        "model-reader",
                        List.of(new LocalObjectReference("registry-credentials")),
                        new AffinityBuilder()
                                .withNewNodeAffinity()
                                .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                                .addNewNodeSelectorTerm()
                                .addNewMatchExpression()
                                .withKey("nvidia.com/gpu.product")
                                .withOperator("In")
                                .withValues("H100-SXM")
                                .endMatchExpression()
                                .endNodeSelectorTerm()
                                .endRequiredDuringSchedulingIgnoredDuringExecution()
                                .endNodeAffinity()
                                .build(),
                        List.of(new TopologySpreadConstraintBuilder()
                                .withMaxSkew(1)
                                .withTopologyKey("topology.kubernetes.io/zone")
                                .withWhenUnsatisfiable("ScheduleAnyway")
                                .withNewLabelSelector()
                                .addToMatchLabels("app", "qwen")
                                .endLabelSelector()
                                .build()),
                        "inference-high",
                        "nvidia",
                        "default-scheduler",
                        new PodSecurityContextBuilder().withFsGroup(1000L).build()),
                new RoleTemplate.EngineContainerTemplate(
                        List.of(new VolumeMountBuilder()
                                .withName("weights")
                                .withMountPath("/models")
                                .withReadOnly(true)
                                .build()),
                        List.of(new EnvFromSourceBuilder()
                                .withNewSecretRef()
                                .withName("hf-token")
                                .endSecretRef()
                                .build()),
                        new SecurityContextBuilder()
                                .withAllowPrivilegeEscalation(false)
                                .build()));
    }

    public static RoleTemplate withPodLabels(Map<String, String> labels) {
        return new RoleTemplate(
                new RoleTemplate.PodTemplate(
                        new RoleTemplate.Metadata(labels, null), null, null, null, null, null, null, null, null, null),
                null);
    }

    public static RoleTemplate withVolumeNamed(String name) {
        return new RoleTemplate(
                new RoleTemplate.PodTemplate(
                        null,
                        List.of(new VolumeBuilder()
                                .withName(name)
                                .withNewEmptyDir()
                                .endEmptyDir()
                                .build()),
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null),
                null);
    }

    public static RoleTemplate withMountAt(String path) {
        return new RoleTemplate(
                null,
                new RoleTemplate.EngineContainerTemplate(
                        List.of(new VolumeMountBuilder()
                                .withName("scratch")
                                .withMountPath(path)
                                .build()),
                        null,
                        null));
    }
}
