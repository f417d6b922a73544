package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.RoleTemplates;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.RoleTemplate;
import dev.ebb.operator.drain.DrainHook;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class PodTemplateRenderTest {
    private static final PodRenderer RENDERER = new PodRenderer();

    private static Pod render(Specs.Deployment spec, int member) {
        DesiredDeployment desired = spec.desired();
        return RENDERER.render(new MemberSlot(desired, desired.roles().get(0), 0, member), "h");
    }

    private static Container engine(Pod pod) {
        return pod.getSpec().getContainers().stream()
                .filter(c -> EnginePod.CONTAINER.equals(c.getName()))
                .findFirst()
                .orElseThrow();
    }

    private static String hash(Specs.Deployment spec) {
        DesiredDeployment desired = spec.desired();
        return RENDERER.configHash(desired, desired.roles().get(0));
    }

    private static Optional<Volume> sharedMemory(Pod pod) {
        return Optional.ofNullable(pod.getSpec().getVolumes())
                .flatMap(vs -> vs.stream()
                        .filter(v -> RoleTemplate.SHARED_MEMORY_VOLUME.equals(v.getName()))
                        .findFirst());
    }

    @Test
    void everyMemberCarriesTheTemplateAndTheOperatorsOwnLabelsWin() {
        RoleTemplate template = RoleTemplates.full();
        Specs.Deployment spec =
                deployment("qwen", "vLLM").role(role("s").size(2).template(template));

        for (int member = 0; member < 2; member++) {
            Pod pod = render(spec, member);
            assertThat(pod.getMetadata().getLabels())
                    .containsEntry("kueue.x-k8s.io/queue-name", "team-a")
                    .containsEntry(Labels.SERVING, Labels.SERVING_YES)
                    .containsEntry(Labels.DEPLOYMENT, "qwen");
            assertThat(pod.getMetadata().getAnnotations())
                    .containsEntry("example.com/owner", "team-a")
                    .containsKey(Annotations.REPLICA_SIZE);
            assertThat(pod.getSpec().getServiceAccountName()).isEqualTo("model-reader");
            assertThat(pod.getSpec().getImagePullSecrets())
                    .extracting(r -> r.getName())
                    .containsExactly("registry-credentials");
            assertThat(pod.getSpec().getAffinity()).isEqualTo(template.pod().affinity());
            assertThat(pod.getSpec().getTopologySpreadConstraints())
                    .isEqualTo(template.pod().topologySpreadConstraints());
            assertThat(pod.getSpec().getPriorityClassName()).isEqualTo("inference-high");
            assertThat(pod.getSpec().getRuntimeClassName()).isEqualTo("nvidia");
            assertThat(pod.getSpec().getSchedulerName()).isEqualTo("default-scheduler");
            assertThat(pod.getSpec().getSecurityContext().getFsGroup()).isEqualTo(1000L);
            assertThat(pod.getSpec().getVolumes())
                    .extracting(Volume::getName)
                    .containsExactly("weights", RoleTemplate.SHARED_MEMORY_VOLUME, RoleTemplate.DRAIN_HOOK_VOLUME);
            Container engine = engine(pod);
            assertThat(engine.getVolumeMounts())
                    .extracting(m -> m.getName() + "@" + m.getMountPath())
                    .containsExactly(
                            "weights@/models",
                            RoleTemplate.SHARED_MEMORY_VOLUME + "@/dev/shm",
                            RoleTemplate.DRAIN_HOOK_VOLUME + "@" + DrainHook.MOUNT_PATH);
            assertThat(engine.getEnvFrom())
                    .extracting(e -> e.getSecretRef().getName())
                    .containsExactly("hf-token");
            assertThat(engine.getSecurityContext().getAllowPrivilegeEscalation())
                    .isFalse();
        }
    }

    @Test
    void aTemplateLabelUnderTheOperatorsPrefixCannotOverrideTheServingLabel() {
        Pod pod = render(
                deployment("qwen", "vLLM")
                        .role(role("s").template(RoleTemplates.withPodLabels(Map.of(Labels.SERVING, "false")))),
                0);

        assertThat(pod.getMetadata().getLabels()).containsEntry(Labels.SERVING, Labels.SERVING_YES);
    }

    @Test
    void sharedMemoryDefaultsOnWhereAReplicaSpansSeveralAcceleratorsOrPods() {
        record Case(String name, Specs.Role role, String size, boolean byDefault) {}
        List<Case> cases = List.of(
                new Case("one GPU", role("s"), null, false),
                new Case("tensor parallel 2", role("s").extraArgs("--tensor-parallel-size", "2"), "2Gi", true),
                new Case("SGLang's --tp=4", role("s").extraArgs("--tp=4"), "2Gi", true),
                new Case("pipeline parallel 2", role("s").extraArgs("-pp", "2"), "2Gi", true),
                new Case(
                        "a tensor parallel size that is no number",
                        role("s").extraArgs("--tensor-parallel-size", "two"),
                        null,
                        false),
                new Case("two Pods per replica", role("s").size(2), "2Gi", true),
                new Case("set on one GPU", role("s").sharedMemory("8Gi"), "8Gi", false),
                new Case(
                        "turned off for tensor parallel 2",
                        role("s").extraArgs("-tp", "2").sharedMemory("0"),
                        null,
                        false));
        for (Case c : cases) {
            Pod pod = render(deployment("qwen", "vLLM").role(c.role()), 0);
            Optional<Volume> volume = sharedMemory(pod);
            if (c.size() == null) {
                assertThat(volume).as(c.name()).isEmpty();
                assertThat(engine(pod).getVolumeMounts())
                        .as(c.name())
                        .noneMatch(m -> "/dev/shm".equals(m.getMountPath()));
            } else {
                assertThat(volume.orElseThrow().getEmptyDir().getMedium())
                        .as(c.name())
                        .isEqualTo("Memory");
                assertThat(volume.orElseThrow().getEmptyDir().getSizeLimit())
                        .as(c.name())
                        .isEqualTo(new Quantity(c.size()));
                assertThat(engine(pod).getVolumeMounts())
                        .as(c.name())
                        .anyMatch(m -> "/dev/shm".equals(m.getMountPath()));
            }
            assertThat(pod.getMetadata().getAnnotations().containsKey(Annotations.DEFAULT_SHARED_MEMORY))
                    .as(c.name())
                    .isEqualTo(c.byDefault());
        }
    }

    @Test
    void theLeaderMayLoadItsModelForAnHourByDefaultOrAsLongAsTheRoleSays() {
        Pod byDefault = render(deployment("qwen", "vLLM").role(role("s").size(2)), 0);
        Pod follower = render(deployment("qwen", "vLLM").role(role("s").size(2)), 1);
        Pod set = render(deployment("qwen", "vLLM").role(role("s").startupSeconds(600)), 0);

        assertThat(engine(byDefault).getStartupProbe().getPeriodSeconds()
                        * engine(byDefault).getStartupProbe().getFailureThreshold())
                .isEqualTo(3600);
        assertThat(engine(byDefault).getStartupProbe().getHttpGet().getPath())
                .isEqualTo(engine(byDefault).getReadinessProbe().getHttpGet().getPath());
        assertThat(byDefault.getMetadata().getAnnotations()).containsEntry(Annotations.DEFAULT_STARTUP_SECONDS, "3600");
        assertThat(engine(follower).getStartupProbe())
                .as("a follower serves no HTTP")
                .isNull();
        assertThat(engine(set).getStartupProbe().getPeriodSeconds()
                        * engine(set).getStartupProbe().getFailureThreshold())
                .isEqualTo(600);
        assertThat(set.getMetadata().getAnnotations()).doesNotContainKey(Annotations.DEFAULT_STARTUP_SECONDS);
    }

    /** What a release before these defaults rendered for the same spec: no /dev/shm and no startup probe. */
    private static Pod asAnEarlierReleaseRendered(Pod pod) {
        Pod earlier = new PodBuilder(pod).build();
        earlier.getMetadata().getAnnotations().remove(Annotations.DEFAULT_SHARED_MEMORY);
        earlier.getMetadata().getAnnotations().remove(Annotations.DEFAULT_STARTUP_SECONDS);
        earlier.getMetadata().getLabels().remove(Labels.CONFIG_HASH);
        earlier.getMetadata().getAnnotations().remove(Annotations.HOOK_REVISION);
        earlier.getSpec().setVolumes(null);
        engine(earlier).setVolumeMounts(List.of());
        engine(earlier).setStartupProbe(null);
        return earlier;
    }

    @Test
    void theOperatorsDefaultsStayOutOfTheHashSoTheReleaseThatBringsThemTurnsOverNoReplica() {
        Specs.Deployment spec =
                deployment("qwen", "vLLM").role(role("s").size(2).extraArgs("--tensor-parallel-size", "2"));
        DesiredDeployment desired = spec.desired();
        List<Pod> earlier = IntStream.range(0, 2)
                .mapToObj(member -> asAnEarlierReleaseRendered(render(spec, member)))
                .toList();

        assertThat(PodRenderer.hashOf(earlier))
                .isEqualTo(RENDERER.configHash(desired, desired.roles().get(0)));
    }

    @Test
    void whatTheSpecSetsEntersTheHash() {
        assertThat(List.of(
                        hash(deployment("qwen", "vLLM").role(role("s"))),
                        hash(deployment("qwen", "vLLM").role(role("s").template(RoleTemplates.full()))),
                        hash(deployment("qwen", "vLLM")
                                .role(role("s")
                                        .template(RoleTemplates.withPodLabels(
                                                Map.of("kueue.x-k8s.io/queue-name", "b"))))),
                        hash(deployment("qwen", "vLLM").role(role("s").sharedMemory("8Gi"))),
                        hash(deployment("qwen", "vLLM").role(role("s").startupSeconds(600)))))
                .doesNotHaveDuplicates();
    }

    @Test
    void underAKueueQueueEachReplicaIsOnePodGroupOfItsMembers() {
        Specs.Deployment queued = deployment("big", "SGLang")
                .role(role("tp")
                        .size(2)
                        .replicas(2)
                        .template(RoleTemplates.withPodLabels(Map.of(PodRenderer.KUEUE_QUEUE, "team-a"))));

        for (int member = 0; member < 2; member++) {
            DesiredDeployment desired = queued.desired();
            Pod pod = RENDERER.render(new MemberSlot(desired, desired.roles().get(0), 1, member), "h");
            assertThat(pod.getMetadata().getLabels())
                    .containsEntry(PodRenderer.KUEUE_QUEUE, "team-a")
                    .containsEntry(PodRenderer.KUEUE_POD_GROUP, "big-tp-r1");
            assertThat(pod.getMetadata().getAnnotations())
                    .containsEntry(PodRenderer.KUEUE_POD_GROUP_SIZE, "2")
                    .containsEntry(PodRenderer.KUEUE_POD_GROUP_SERVING, "true");
        }
        assertThat(render(deployment("big", "SGLang").role(role("tp").size(2)), 0)
                        .getMetadata()
                        .getLabels())
                .doesNotContainKey(PodRenderer.KUEUE_POD_GROUP);
    }

    @Test
    void aLoadedEngineIsRestartedForAnUnansweredHealthCheckOnlyWhereTheRoleAsks() {
        Pod unset = render(deployment("qwen", "vLLM").role(role("s")), 0);
        Pod set = render(deployment("qwen", "vLLM").role(role("s").livenessSeconds(60)), 0);

        assertThat(engine(unset).getLivenessProbe())
                .as("a restart ends every generation")
                .isNull();
        assertThat(engine(set).getLivenessProbe().getPeriodSeconds()
                        * engine(set).getLivenessProbe().getFailureThreshold())
                .isEqualTo(60);
        assertThat(engine(set).getLivenessProbe().getHttpGet().getPath())
                .isEqualTo(engine(set).getReadinessProbe().getHttpGet().getPath());
        assertThat(hash(deployment("qwen", "vLLM").role(role("s").livenessSeconds(60))))
                .isNotEqualTo(hash(deployment("qwen", "vLLM").role(role("s"))));
    }
}
