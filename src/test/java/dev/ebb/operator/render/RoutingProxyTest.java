package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Platform;
import dev.ebb.operator.drain.DrainWarning;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Decode replicas under llm-d's router get the routing proxy in front, as a native sidecar where the cluster has them. */
class RoutingProxyTest {
    private static final PodRenderer RENDERER = new PodRenderer();

    private static Pod decodeLeader(String engine, String router, Platform platform) {
        DesiredDeployment d = deployment("qwen", engine)
                .scaling("prefill")
                .router(router)
                .role(role("prefill").kind("Prefill"))
                .role(role("decode").kind("Decode").port(8000))
                .desired()
                .on(platform);
        DesiredRole decode = d.roles().get(1);
        return RENDERER.render(new MemberSlot(d, decode, 0, 0), "h");
    }

    private static Container engine(Pod pod) {
        return pod.getSpec().getContainers().stream()
                .filter(c -> c.getName().equals(EnginePod.CONTAINER))
                .findFirst()
                .orElseThrow();
    }

    /** A classic second container gets SIGTERM at the delete, while the engine's hook is still draining the streams it carries. */
    @Test
    void onlyAnOlderClusterWarnsThatTheProxyStopsAtTheDeleteAndOnlyForTheProxiedRole() {
        DesiredDeployment split = deployment("qwen", "vLLM")
                .scaling("prefill")
                .router("llm-d-router")
                .role(role("prefill").kind("Prefill"))
                .role(role("decode").kind("Decode"))
                .desired();
        DesiredDeployment older = split.on(Platform.BEFORE_NATIVE_SIDECARS);
        DesiredDeployment current = split.on(Platform.CURRENT);

        assertThat(RENDERER.drainTimeline(older, older.roles().get(1)).warnings())
                .extracting(DrainWarning::reason)
                .containsExactly(DrainWarning.PROXY_STOPS_AT_DELETE);
        assertThat(RENDERER.drainTimeline(older, older.roles().get(1))
                        .warnings()
                        .get(0)
                        .message())
                .contains("below Kubernetes 1.29");
        assertThat(RENDERER.drainTimeline(older, older.roles().get(0)).warnings())
                .isEmpty();
        assertThat(RENDERER.drainTimeline(current, current.roles().get(1)).warnings())
                .isEmpty();
    }

    @Test
    void onAClusterWithNativeSidecarsTheProxyIsARestartingInitContainer() {
        Pod pod = decodeLeader("vLLM", "llm-d-router", Platform.CURRENT);

        assertThat(pod.getSpec().getInitContainers()).singleElement().satisfies(proxy -> {
            assertThat(proxy.getName()).isEqualTo(RoutingProxy.CONTAINER);
            assertThat(proxy.getRestartPolicy()).isEqualTo("Always");
            assertThat(proxy.getArgs())
                    .containsExactly(
                            "--port=8000", "--model-server-port=8200", "--kv-connector=nixlv2", "--secure-proxy=false");
        });
        assertThat(pod.getSpec().getContainers()).extracting(Container::getName).containsExactly(EnginePod.CONTAINER);
    }

    @Test
    void onAnOlderClusterTheProxyIsAPlainSecondContainer() {
        Pod pod = decodeLeader("SGLang", "llm-d-router", Platform.BEFORE_NATIVE_SIDECARS);

        assertThat(pod.getSpec().getInitContainers()).isEmpty();
        assertThat(pod.getSpec().getContainers())
                .extracting(Container::getName)
                .containsExactly(EnginePod.CONTAINER, RoutingProxy.CONTAINER);
        assertThat(pod.getSpec().getContainers().get(1).getRestartPolicy()).isNull();
        assertThat(pod.getSpec().getContainers().get(1).getArgs())
                .contains("--kv-connector=sglang", "--secure-proxy=false");
    }

    @ParameterizedTest(name = "{0} on a cluster with native sidecars: {1}")
    @CsvSource({"vLLM, true, nixlv2", "vLLM, false, nixlv2", "SGLang, true, sglang", "SGLang, false, sglang"})
    void theProxyTakesTheReleasedFlagsAndRunsAsItsImagesNumberedUser(
            String engine, boolean nativeSidecars, String connector) {
        Pod pod = decodeLeader(
                engine, "llm-d-router", nativeSidecars ? Platform.CURRENT : Platform.BEFORE_NATIVE_SIDECARS);
        Container proxy = (nativeSidecars
                        ? pod.getSpec().getInitContainers()
                        : pod.getSpec().getContainers())
                .stream()
                        .filter(c -> c.getName().equals(RoutingProxy.CONTAINER))
                        .findFirst()
                        .orElseThrow();

        assertThat(proxy.getArgs())
                .containsExactly(
                        "--port=8000",
                        "--model-server-port=" + RoutingProxy.ENGINE_PORT,
                        "--kv-connector=" + connector,
                        "--secure-proxy=false");
        assertThat(proxy.getCommand()).isEmpty();
        assertThat(proxy.getImage()).isEqualTo("default/routing-proxy:test");
        assertThat(proxy.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(proxy.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
    }

    @Test
    void behindTheProxyTheEngineItsProbeItsHookAndItsScrapeAnnotationMoveToTheEnginesOwnPort() {
        Pod pod = decodeLeader("vLLM", "llm-d-router", Platform.CURRENT);
        Container engine = engine(pod);

        assertThat(engine.getCommand()).containsSubsequence("--port", "8200");
        assertThat(engine.getPorts())
                .singleElement()
                .satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(8200));
        assertThat(engine.getReadinessProbe().getHttpGet().getPort().getIntVal())
                .isEqualTo(8200);
        assertThat(engine.getLifecycle().getPreStop().getExec().getCommand()).containsSubsequence("--port", "8200");
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(Annotations.SCRAPE_PORT, "8200");
    }

    @Test
    void noProxyForDecodeUnderAnotherRouterNorForOtherRoles() {
        DesiredDeployment d = deployment("qwen", "vLLM")
                .router("llm-d-router")
                .role(role("server"))
                .desired();
        Pod server = RENDERER.render(new MemberSlot(d, d.roles().get(0), 0, 0), "h");

        assertThat(server.getSpec().getInitContainers()).isEmpty();
        assertThat(server.getSpec().getContainers()).hasSize(1);
        assertThat(server.getMetadata().getAnnotations()).containsEntry(Annotations.SCRAPE_PORT, "8000");
    }

    @ParameterizedTest(name = "Kubernetes {0}.{1}: native sidecars {2}")
    @CsvSource({
        "1,29,true",
        "1,33,true",
        "1,28,false",
        "1,27+,false",
        "1,30+,true",
        "2,0,true",
        "'',29,false",
        "x,y,false"
    })
    void theClustersVersionSaysWhichSidecarsItRuns(String major, String minor, boolean native_) {
        assertThat(Platform.of(major, minor).nativeSidecars()).isEqualTo(native_);
    }
}
