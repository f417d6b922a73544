package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.rbac.Role;
import org.junit.jupiter.api.Test;

/**
 * vLLM's production-stack router rendered as its release (vllm-stack-0.1.12) runs: the facts of its row in the
 * spec's table of routers, each checked on what the renderer produces.
 */
class VllmRouterLayoutTest {
    private static final String SELECTOR =
            "serving.ebb.dev/deployment=qwen,serving.ebb.dev/serving=true,serving.ebb.dev/member-index=0";

    private static DesiredDeployment servers() {
        return deployment("qwen", "vLLM")
                .namespace("team-a")
                .router("vllm-router")
                .role(role("server").port(8100))
                .desired();
    }

    private static DesiredDeployment split() {
        return deployment("qwen", "vLLM")
                .scaling("prefill")
                .namespace("team-a")
                .router("vllm-router")
                .role(role("prefill").kind("Prefill").port(8100))
                .role(role("decode").kind("Decode").port(8100))
                .desired();
    }

    @Test
    void theImageIsThePinnedReleaseAndItsEntrypointIsKept() {
        Container router = RenderedRouter.router(servers());

        assertThat(router.getImage()).isEqualTo("default/vllm-router:test");
        assertThat(router.getCommand()).isEmpty();
    }

    @Test
    void itDiscoversTheServingLeadersByPodIpInTheDeploymentsNamespaceOnTheRolesPort() {
        assertThat(RenderedRouter.router(servers()).getArgs())
                .containsExactly(
                        "--host",
                        "0.0.0.0",
                        "--port",
                        "8001",
                        "--service-discovery",
                        "k8s",
                        "--k8s-service-discovery-type",
                        "pod-ip",
                        "--k8s-namespace",
                        "team-a",
                        "--k8s-label-selector",
                        SELECTOR,
                        "--k8s-port",
                        "8100",
                        "--routing-logic",
                        "roundrobin");
    }

    @Test
    void clientsAndTheOperatorReachItsApiPortWhichItsReadinessProbes() {
        DesiredDeployment desired = servers();

        assertThat(RenderedRouter.only(RouterRenderer.render(desired), Service.class)
                        .getSpec()
                        .getPorts())
                .extracting(p -> p.getPort())
                .containsExactly(8001);
        assertThat(RouterRenderer.clientAddress(desired)).isEqualTo("http://qwen-router.team-a.svc:8001");
        assertThat(RenderedRouter.router(desired).getPorts())
                .extracting(p -> p.getContainerPort())
                .containsExactly(8001);
        assertThat(RenderedRouter.router(desired)
                        .getReadinessProbe()
                        .getHttpGet()
                        .getPath())
                .isEqualTo("/health");
        assertThat(RenderedRouter.router(desired)
                        .getReadinessProbe()
                        .getHttpGet()
                        .getPort()
                        .getIntVal())
                .isEqualTo(8001);
        assertThat(RouterAdmin.of(RouterKind.VLLM_ROUTER)).isEqualTo(new RouterAdmin(8001, "/engines"));
    }

    @Test
    void anImageThatRunsAsRootStartsUnderRunAsNonRootAsANumberedUserWithAWritableScratchDirectory() {
        PodSpec pod = RenderedRouter.podSpec(servers());
        Container router = pod.getContainers().get(0);

        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
        assertThat(router.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(router.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(router.getVolumeMounts()).singleElement().satisfies(mount -> {
            assertThat(mount.getMountPath()).isEqualTo("/tmp");
            assertThat(pod.getVolumes()).anySatisfy(volume -> {
                assertThat(volume.getName()).isEqualTo(mount.getName());
                assertThat(volume.getEmptyDir()).isNotNull();
            });
        });
        assertThat(router.getEnv()).anySatisfy(env -> {
            assertThat(env.getName()).isEqualTo("HOME");
            assertThat(env.getValue()).isEqualTo("/tmp");
        });
    }

    @Test
    void itsAccountMayReadPodsAndNeverRelabelThem() {
        assertThat(RenderedRouter.only(RouterRenderer.render(servers()), Role.class)
                        .getRules())
                .singleElement()
                .satisfies(rule -> {
                    assertThat(rule.getResources()).containsExactly("pods");
                    assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
                });
    }

    @Test
    void aSplitIsRoutedPrefillThenDecodeByThePodsModelLabel() {
        DesiredDeployment desired = split();

        assertThat(RenderedRouter.router(desired).getArgs())
                .containsSubsequence("--routing-logic", "disaggregated_prefill_orchestrated")
                .containsSubsequence("--prefill-model-labels", "prefill")
                .containsSubsequence("--decode-model-labels", "decode")
                .doesNotContain("roundrobin");
        assertThat(RenderedRouter.member(desired, "prefill", 0).getMetadata().getLabels())
                .containsEntry("model", "prefill");
        assertThat(RenderedRouter.member(desired, "decode", 0).getMetadata().getLabels())
                .containsEntry("model", "decode");
    }

    @Test
    void serverPodsCarryNoModelLabelAndNoAnnotationOfTheRouters() {
        Pod server = RenderedRouter.member(servers(), "server", 0);

        assertThat(server.getMetadata().getLabels()).doesNotContainKey("model");
        assertThat(server.getMetadata().getAnnotations()).doesNotContainKey("sglang.ai/bootstrap-port");
    }
}
