package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SGLang's model gateway rendered as its release (smg v1.9.0) runs: the facts of its row in the spec's table of
 * routers, each checked on what the renderer produces.
 */
class SglangGatewayLayoutTest {
    private static DesiredDeployment servers() {
        return deployment("qwen", "SGLang")
                .namespace("team-a")
                .router("sglang-gateway")
                .role(role("server").port(8100))
                .desired();
    }

    private static Specs.Deployment split(Specs.Role prefill) {
        return deployment("qwen", "SGLang")
                .scaling("decode")
                .namespace("team-a")
                .router("sglang-gateway")
                .role(prefill.kind("Prefill").port(8100))
                .role(role("decode").kind("Decode").port(8100));
    }

    @Test
    void theImageIsThePinnedReleaseAndItsLauncherEntrypointIsNotOverridden() {
        Container router = RenderedRouter.router(servers());

        assertThat(router.getImage()).isEqualTo("default/sglang-gateway:test");
        assertThat(router.getCommand()).isEmpty();
    }

    @Test
    void itDiscoversTheServingLeadersInTheDeploymentsNamespaceOnTheRolesPort() {
        assertThat(RenderedRouter.router(servers()).getArgs())
                .containsExactly(
                        "--host",
                        "0.0.0.0",
                        "--port",
                        "30000",
                        "--service-discovery",
                        "--selector",
                        Labels.DEPLOYMENT + "=qwen",
                        Labels.SERVING + "=true",
                        Labels.MEMBER_INDEX + "=0",
                        "--service-discovery-port",
                        "8100",
                        "--service-discovery-namespace",
                        "team-a",
                        "--prometheus-port",
                        "29000",
                        "--policy",
                        "cache_aware",
                        "--shutdown-grace-period-secs",
                        "240");
    }

    @Test
    void clientsReachItsApiPortWhichItsReadinessProbesOnAPathThatDoesNotDependOnWorkers() {
        DesiredDeployment desired = servers();

        assertThat(RenderedRouter.only(RouterRenderer.render(desired), Service.class)
                        .getSpec()
                        .getPorts())
                .extracting(p -> p.getPort())
                .containsExactly(30000, 29000);
        assertThat(RouterRenderer.clientAddress(desired)).isEqualTo("http://qwen-router.team-a.svc:30000");
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
                .isEqualTo(30000);
        assertThat(RouterAdmin.of(RouterKind.SGLANG_GATEWAY)).isEqualTo(new RouterAdmin(30000, "/workers"));
    }

    @Test
    void itRunsAsTheImagesOwnUserByNumberWithARootFilesystemItCannotWrite() {
        PodSpec pod = RenderedRouter.podSpec(servers());
        Container router = pod.getContainers().get(0);

        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
        assertThat(router.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(router.getVolumeMounts())
                .singleElement()
                .satisfies(mount -> assertThat(mount.getMountPath()).isEqualTo("/tmp"));
        assertThat(pod.getVolumes())
                .singleElement()
                .satisfies(volume -> assertThat(volume.getEmptyDir()).isNotNull());
    }

    @Test
    void itsAccountMayOnlyReadPods() {
        assertThat(RenderedRouter.only(RouterRenderer.render(servers()), Role.class)
                        .getRules())
                .singleElement()
                .satisfies(rule -> {
                    assertThat(rule.getResources()).containsExactly("pods");
                    assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
                });
    }

    @Test
    void aSplitIsDiscoveredByOneSelectorPerHalf() {
        List<String> args =
                RenderedRouter.router(split(role("prefill")).desired()).getArgs();

        assertThat(args)
                .containsSubsequence(
                        "--service-discovery",
                        "--pd-disaggregation",
                        "--prefill-selector",
                        Labels.DEPLOYMENT + "=qwen",
                        Labels.SERVING + "=true",
                        Labels.MEMBER_INDEX + "=0",
                        Labels.ROLE_KIND + "=Prefill",
                        "--decode-selector",
                        Labels.DEPLOYMENT + "=qwen",
                        Labels.SERVING + "=true",
                        Labels.MEMBER_INDEX + "=0",
                        Labels.ROLE_KIND + "=Decode",
                        "--service-discovery-port",
                        "8100")
                .doesNotContain("--selector");
    }

    static Stream<Arguments> bootstrapPorts() {
        return Stream.of(
                Arguments.of("SGLang's default", role("prefill"), "8998"),
                Arguments.of(
                        "the role's own flag",
                        role("prefill").extraArgs("--disaggregation-bootstrap-port", "9100"),
                        "9100"),
                Arguments.of(
                        "the role's own flag, joined",
                        role("prefill").extraArgs("--disaggregation-bootstrap-port=9200"),
                        "9200"),
                Arguments.of(
                        "the last of two, as argparse takes it",
                        role("prefill")
                                .extraArgs(
                                        "--disaggregation-bootstrap-port",
                                        "9100",
                                        "--disaggregation-bootstrap-port",
                                        "9300"),
                        "9300"),
                Arguments.of(
                        "a value that is no port leaves the default",
                        role("prefill").extraArgs("--disaggregation-bootstrap-port", "many"),
                        "8998"),
                Arguments.of(
                        "a take-over command's flag",
                        role("prefill")
                                .command(
                                        "python3",
                                        "-m",
                                        "sglang.launch_server",
                                        "--disaggregation-bootstrap-port",
                                        "9400"),
                        "9400"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bootstrapPorts")
    void thePrefillLeaderTellsTheGatewayItsBootstrapPort(String title, Specs.Role prefill, String port) {
        DesiredDeployment desired = split(prefill).desired();

        assertThat(RenderedRouter.member(desired, "prefill", 0).getMetadata().getAnnotations())
                .containsEntry("sglang.ai/bootstrap-port", port);
    }

    @Test
    void onlyPrefillLeadersAreAnnotated() {
        DesiredDeployment desired = split(role("prefill").size(2)).desired();

        assertThat(RenderedRouter.member(desired, "prefill", 1).getMetadata().getAnnotations())
                .doesNotContainKey("sglang.ai/bootstrap-port");
        assertThat(RenderedRouter.member(desired, "decode", 0).getMetadata().getAnnotations())
                .doesNotContainKey("sglang.ai/bootstrap-port");
        assertThat(RenderedRouter.member(servers(), "server", 0).getMetadata().getAnnotations())
                .doesNotContainKey("sglang.ai/bootstrap-port");
    }
}
