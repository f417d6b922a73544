package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.RouterImages;
import dev.ebb.operator.api.SpecResolver;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.drain.InFlightGauges;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PodRendererTest {
    private static final PodRenderer RENDERER = new PodRenderer();

    private static Pod render(Specs.Deployment spec, int ordinal, int member) {
        DesiredDeployment desired = spec.desired();
        return RENDERER.render(new MemberSlot(desired, desired.roles().get(0), ordinal, member), "h");
    }

    private static Container main(Pod pod) {
        return pod.getSpec().getContainers().get(0);
    }

    static Stream<Arguments> commandLines() {
        return Stream.of(
                Arguments.of(
                        "vLLM server",
                        deployment("qwen", "vLLM").role(role("server")),
                        0,
                        List.of(
                                "vllm",
                                "serve",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--shutdown-timeout",
                                "19")),
                Arguments.of(
                        "vLLM loads from path, serves the name",
                        deployment("qwen", "vLLM")
                                .modelPath("/models/q")
                                .role(role("server").port(9000)),
                        0,
                        List.of(
                                "vllm",
                                "serve",
                                "/models/q",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "9000",
                                "--shutdown-timeout",
                                "19")),
                Arguments.of(
                        "vLLM prefill",
                        deployment("qwen", "vLLM").scaling("p").role(role("p").kind("Prefill")),
                        0,
                        List.of(
                                "vllm",
                                "serve",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--kv-transfer-config",
                                "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}",
                                "--shutdown-timeout",
                                "19")),
                Arguments.of(
                        "vLLM decode",
                        deployment("qwen", "vLLM").scaling("d").role(role("d").kind("Decode")),
                        0,
                        List.of(
                                "vllm",
                                "serve",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--kv-transfer-config",
                                "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}",
                                "--shutdown-timeout",
                                "19")),
                Arguments.of(
                        "vLLM multi-node leader",
                        deployment("qwen", "vLLM").role(role("big").size(2)),
                        0,
                        List.of(
                                "vllm",
                                "serve",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--nnodes",
                                "2",
                                "--node-rank",
                                "0",
                                "--master-addr",
                                "qwen-big-r3-m0.qwen-big-r3",
                                "--master-port",
                                "29500",
                                "--shutdown-timeout",
                                "19")),
                Arguments.of(
                        "vLLM multi-node follower",
                        deployment("qwen", "vLLM").role(role("big").size(2)),
                        1,
                        List.of(
                                "vllm",
                                "serve",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--nnodes",
                                "2",
                                "--node-rank",
                                "1",
                                "--master-addr",
                                "qwen-big-r3-m0.qwen-big-r3",
                                "--master-port",
                                "29500",
                                "--headless",
                                "--shutdown-timeout",
                                "19")),
                Arguments.of(
                        "SGLang server",
                        deployment("qwen", "SGLang").role(role("server")),
                        0,
                        List.of(
                                "python3",
                                "-m",
                                "sglang.launch_server",
                                "--model-path",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--enable-metrics")),
                Arguments.of(
                        "SGLang prefill",
                        deployment("qwen", "SGLang").scaling("p").role(role("p").kind("Prefill")),
                        0,
                        List.of(
                                "python3",
                                "-m",
                                "sglang.launch_server",
                                "--model-path",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--enable-metrics",
                                "--disaggregation-mode",
                                "prefill")),
                Arguments.of(
                        "SGLang decode",
                        deployment("qwen", "SGLang").scaling("d").role(role("d").kind("Decode")),
                        0,
                        List.of(
                                "python3",
                                "-m",
                                "sglang.launch_server",
                                "--model-path",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--enable-metrics",
                                "--disaggregation-mode",
                                "decode")),
                Arguments.of(
                        "SGLang multi-node member",
                        deployment("qwen", "SGLang").role(role("big").size(4)),
                        2,
                        List.of(
                                "python3",
                                "-m",
                                "sglang.launch_server",
                                "--model-path",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--enable-metrics",
                                "--nnodes",
                                "4",
                                "--node-rank",
                                "2",
                                "--dist-init-addr",
                                "qwen-big-r3-m0.qwen-big-r3:5000")),
                Arguments.of(
                        "extraArgs come last",
                        deployment("qwen", "vLLM").role(role("s").extraArgs("--max-model-len", "8192")),
                        0,
                        List.of(
                                "vllm",
                                "serve",
                                "Qwen/Qwen3-8B",
                                "--served-model-name",
                                "Qwen/Qwen3-8B",
                                "--host",
                                "0.0.0.0",
                                "--port",
                                "8000",
                                "--shutdown-timeout",
                                "19",
                                "--max-model-len",
                                "8192")),
                Arguments.of(
                        "take-over is rendered as given",
                        deployment("qwen", "vLLM").role(role("s").command("/bin/my-engine", "--flag")),
                        0,
                        List.of("/bin/my-engine", "--flag")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("commandLines")
    void commandLineIsExactlyTheEngineProfiles(String title, Specs.Deployment spec, int member, List<String> argv) {
        Pod pod = render(spec, 3, member);

        assertThat(main(pod).getName()).isEqualTo("main");
        assertThat(main(pod).getCommand()).containsExactlyElementsOf(argv);
        assertThat(main(pod).getArgs()).isEmpty();
    }

    @Test
    void labelsAnnotationsAndOwnerIdentifyTheMember() {
        Pod pod = render(
                deployment("qwen", "vLLM")
                        .scaling("server")
                        .role(role("server").kind("Decode").size(2)),
                4,
                1);

        assertThat(pod.getMetadata().getName()).isEqualTo("qwen-server-r4-m1");
        assertThat(pod.getMetadata().getNamespace()).isEqualTo("team-a");
        assertThat(pod.getMetadata().getLabels())
                .containsEntry(Labels.DEPLOYMENT, "qwen")
                .containsEntry(Labels.ROLE, "server")
                .containsEntry(Labels.ROLE_KIND, "Decode")
                .containsEntry(Labels.REPLICA, "4")
                .containsEntry(Labels.MEMBER_INDEX, "1")
                .containsEntry(Labels.CONFIG_HASH, "h")
                .containsEntry(Labels.SERVING, "true");
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(Annotations.REPLICA_SIZE, "2");
        assertThat(pod.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
            assertThat(ref.getKind()).isEqualTo("ModelDeployment");
            assertThat(ref.getApiVersion()).isEqualTo("serving.ebb.dev/v1alpha1");
            assertThat(ref.getName()).isEqualTo("qwen");
            assertThat(ref.getUid()).isEqualTo("uid-qwen");
            assertThat(ref.getController()).isTrue();
        });
        assertThat(pod.getSpec().getHostname()).isEqualTo("qwen-server-r4-m1");
        assertThat(pod.getSpec().getSubdomain()).isEqualTo("qwen-server-r4");
    }

    @Test
    void operatorBuiltMemberIsScrapableProbedAndGivenTheDefaultGrace() {
        Pod pod = render(deployment("qwen", "SGLang").role(role("server").port(30000)), 0, 0);

        assertThat(pod.getMetadata().getAnnotations())
                .containsEntry("prometheus.io/scrape", "true")
                .containsEntry("prometheus.io/port", "30000")
                .containsEntry("prometheus.io/path", "/metrics")
                .containsEntry("prometheus.io/scheme", "http");
        assertThat(pod.getSpec().getTerminationGracePeriodSeconds()).isEqualTo(30L);
        assertThat(main(pod).getReadinessProbe().getHttpGet().getPath()).isEqualTo("/health");
        assertThat(main(pod).getReadinessProbe().getHttpGet().getPort().getIntVal())
                .isEqualTo(30000);
        assertThat(main(pod).getPorts())
                .singleElement()
                .satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(30000));
        assertThat(pod.getSpec().getEnableServiceLinks()).isFalse();
        assertThat(pod.getSpec().getHostname()).isNull();
    }

    @Test
    void everyOperatorBuiltMemberGetsTheDrainHookWithItsParametersAsSeparateItems() {
        Pod pod = render(
                deployment("qwen", "SGLang")
                        .scaling("d")
                        .role(role("d").kind("Decode").grace(45).port(30000).size(2)),
                0,
                1);

        List<String> hook = main(pod).getLifecycle().getPreStop().getExec().getCommand();
        assertThat(hook.subList(0, 2)).containsExactly("python3", "-c");
        assertThat(hook.subList(3, 5))
                .as("the mounted script, and how long to hold should it be unreadable: until the hook's own deadline")
                .containsExactly("/etc/ebb/drain-hook/drain-hook.py", "42");
        assertThat(hook.subList(5, 9))
                .as("where its lines and its ending go: the container's log and termination message")
                .containsExactly("--container-log", "/proc/1/fd/2", "--termination-log", "/dev/termination-log");
        assertThat(hook.subList(9, hook.size()))
                .as("a follower's hook reads its leader's engine, by the leader's stable name")
                .containsExactly(
                        "--scheme",
                        "http",
                        "--host",
                        "qwen-d-r0-m0.qwen-d-r0",
                        "--port",
                        "30000",
                        "--path",
                        "/metrics",
                        "--grace",
                        "45",
                        "--gauges",
                        InFlightGauges.argument(InFlightGauges.of(Engine.SGLANG)),
                        "--settle",
                        "5",
                        "--interval",
                        "1",
                        "--read-timeout",
                        "2",
                        "--last-read-margin",
                        "5");
        assertThat(pod.getSpec().getTerminationGracePeriodSeconds()).isEqualTo(45L);
    }

    @Test
    void aLeaderOrASinglePodReplicaReadsItsOwnEngineOverLoopback() {
        Specs.Deployment spec = deployment("qwen", "SGLang")
                .scaling("d")
                .role(role("d").kind("Decode").size(2));

        assertThat(main(render(spec, 3, 0))
                        .getLifecycle()
                        .getPreStop()
                        .getExec()
                        .getCommand())
                .containsSubsequence("--host", "127.0.0.1");
        assertThat(main(render(deployment("qwen", "vLLM").role(role("s")), 0, 0))
                        .getLifecycle()
                        .getPreStop()
                        .getExec()
                        .getCommand())
                .containsSubsequence("--host", "127.0.0.1");
        assertThat(main(render(spec, 3, 1))
                        .getLifecycle()
                        .getPreStop()
                        .getExec()
                        .getCommand())
                .containsSubsequence("--host", "qwen-d-r3-m0.qwen-d-r3");
    }

    @Test
    void tlsEngineIsDrainedOverHttps() {
        Pod pod = render(deployment("qwen", "vLLM").role(role("s").extraArgs("--ssl-certfile", "/tls/crt")), 0, 0);

        assertThat(main(pod).getLifecycle().getPreStop().getExec().getCommand())
                .containsSubsequence("--scheme", "https");
    }

    @Test
    void tlsFlagTurnsScrapeSchemeAndProbeToHttps() {
        Pod pod = render(
                deployment("qwen", "vLLM")
                        .role(role("s").extraArgs("--ssl-certfile=/tls/crt", "--ssl-keyfile", "/tls/key")),
                0,
                0);

        assertThat(pod.getMetadata().getAnnotations()).containsEntry("prometheus.io/scheme", "https");
        assertThat(main(pod).getReadinessProbe().getHttpGet().getScheme()).isEqualTo("HTTPS");
    }

    @Test
    void roleGraceIsWrittenToThePod() {
        assertThat(render(deployment("qwen", "vLLM").role(role("s").grace(45)), 0, 0)
                        .getSpec()
                        .getTerminationGracePeriodSeconds())
                .isEqualTo(45L);
    }

    @Test
    void followersOfAMultiPodReplicaHaveNoReadinessProbeSinceTheyServeNoHttp() {
        Specs.Deployment spec = deployment("qwen", "vLLM").role(role("big").size(2));

        assertThat(main(render(spec, 0, 0)).getReadinessProbe()).isNotNull();
        assertThat(main(render(spec, 0, 1)).getReadinessProbe()).isNull();
    }

    @Test
    void takeOverRoleGetsNoScrapeAnnotationsNoProbeAndKeepsKubernetesGrace() {
        Pod unset = render(deployment("qwen", "vLLM").role(role("s").command("/bin/engine")), 0, 0);
        Pod set = render(
                deployment("qwen", "vLLM").role(role("s").command("/bin/engine").grace(90)), 0, 0);

        assertThat(unset.getMetadata().getAnnotations())
                .containsOnlyKeys(Annotations.REPLICA_SIZE, Annotations.DEFAULT_IMAGE);
        assertThat(main(unset).getReadinessProbe()).isNull();
        assertThat(main(unset).getLifecycle()).isNull();
        assertThat(unset.getSpec().getTerminationGracePeriodSeconds()).isNull();
        assertThat(set.getSpec().getTerminationGracePeriodSeconds()).isEqualTo(90L);
    }

    static Stream<Arguments> hostileArguments() {
        return Stream.of(
                Arguments.of("double quotes", "--chat-template=\"{{ x }}\""),
                Arguments.of("single quotes", "it's"),
                Arguments.of("command substitution", "$(curl evil)"),
                Arguments.of("backticks", "`reboot`"),
                Arguments.of("newline", "--a\n--b"),
                Arguments.of("semicolon", "x; rm -rf /"),
                Arguments.of("empty", ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileArguments")
    void hostileExtraArgumentStaysOneArgvItem(String title, String hostile) {
        Pod pod = render(deployment("qwen", "vLLM").role(role("s").extraArgs(hostile, "--next")), 0, 0);

        List<String> command = main(pod).getCommand();
        assertThat(command.subList(command.size() - 2, command.size())).containsExactly(hostile, "--next");
    }

    @Test
    void hostileModelNameStaysOneArgvItem() {
        String model = "org/model $(id) \"quoted\"\nnext";
        Pod pod = render(deployment("qwen", "SGLang").model(model).role(role("s")), 0, 0);

        assertThat(main(pod).getCommand())
                .containsSubsequence("--model-path", model)
                .containsSubsequence("--served-model-name", model);
    }

    @Test
    void namesAtTheLengthLimitStayWithinADnsLabel() {
        Pod pod = render(
                deployment("m".repeat(32), "vLLM")
                        .role(role("r".repeat(20)).size(64).replicas(1024)),
                1023,
                63);

        assertThat(pod.getMetadata().getName()).hasSize(63);
        assertThat(pod.getSpec().getHostname()).hasSize(63);
    }

    @Test
    void renderingIsDeterministic() throws Exception {
        ObjectMapper json = new ObjectMapper();
        Specs.Deployment spec =
                deployment("qwen", "vLLM").role(role("s").size(3).extraArgs("--a", "b"));

        for (int member = 0; member < 3; member++) {
            assertThat(json.writeValueAsString(render(spec, 2, member)))
                    .isEqualTo(json.writeValueAsString(render(spec, 2, member)));
        }
        assertThat(hash(spec)).isEqualTo(hash(spec)).hasSize(10);
    }

    @Test
    void writingADefaultExplicitlyChangesNoHash() {
        String unset = hash(deployment("qwen", "vLLM").role(role("s")));

        assertThat(hash(deployment("qwen", "vLLM").role(role("s").grace(30)))).isEqualTo(unset);
        assertThat(hash(deployment("qwen", "vLLM").role(role("s").kind("Server"))))
                .isEqualTo(unset);
        assertThat(hash(deployment("qwen", "vLLM").role(role("s").port(8000)))).isEqualTo(unset);
        assertThat(hash(deployment("qwen", "vLLM").role(role("s").size(1)))).isEqualTo(unset);
        assertThat(hash(deployment("qwen", "vLLM").role(role("s").extraArgs(List.of()))))
                .isEqualTo(unset);
    }

    @Test
    void replicasAloneChangeNoHash() {
        assertThat(hash(deployment("qwen", "vLLM").role(role("s").replicas(5))))
                .isEqualTo(hash(deployment("qwen", "vLLM").role(role("s").replicas(2))));
    }

    @Test
    void everyRenderedChangeChangesTheHash() {
        List<String> hashes = new ArrayList<>(List.of(
                hash(deployment("qwen", "vLLM").role(role("s"))),
                hash(deployment("qwen", "vLLM").role(role("s").grace(31))),
                hash(deployment("qwen", "vLLM").role(role("s").image("other:1"))),
                hash(deployment("qwen", "vLLM").role(role("s").extraArgs("--x"))),
                hash(deployment("qwen", "vLLM").role(role("s").port(8001))),
                hash(deployment("qwen", "vLLM").role(role("s").size(2))),
                hash(deployment("qwen", "vLLM").scaling("s").role(role("s").kind("Decode"))),
                hash(deployment("qwen", "vLLM").modelPath("/m").role(role("s")))));

        assertThat(hashes).doesNotHaveDuplicates();
    }

    private static String hash(Specs.Deployment spec) {
        DesiredDeployment desired = spec.desired();
        return RENDERER.configHash(desired, desired.roles().get(0));
    }

    /** The Pods a release whose hook script reads {@code script} renders for the same spec. */
    private static List<Pod> renderedByARelease(DesiredDeployment d, String script) {
        PodRenderer release = new PodRenderer(new DrainTimelines(), script);
        List<Pod> pods = new ArrayList<>();
        for (int member = 0; member < d.roles().get(0).size(); member++) {
            Pod pod = release.render(new MemberSlot(d, d.roles().get(0), 0, member), "unused");
            pod.getMetadata().getLabels().remove(Labels.CONFIG_HASH);
            pods.add(pod);
        }
        return pods;
    }

    /** The same spec as an operator whose default engine images are {@code image} resolves it. */
    private static DesiredDeployment withDefaultImage(Specs.Deployment spec, String image) {
        return withDefaults(spec, image, "routing-proxy:test");
    }

    private static DesiredDeployment withDefaults(Specs.Deployment spec, String image, String routingProxy) {
        Resolution resolution = new SpecResolver(
                        engine -> image,
                        router -> new RouterImages("router:test", "proxy:test", routingProxy),
                        RouterLayout::unservableBy)
                .resolve(spec.build());
        return ((Resolution.Accepted) resolution).deployment();
    }

    @Test
    void twoReleasesThatDifferOnlyInTheirRoutingProxyImageRenderTheSameConfigHashAndEachProxiedPodRecordsIt() {
        Specs.Deployment spec = deployment("qwen", "vLLM")
                .router("llm-d-router")
                .scaling("p")
                .role(role("p").kind("Prefill"))
                .role(role("d").kind("Decode"));
        DesiredDeployment older =
                withDefaults(spec, "vllm/vllm-openai:v0.11.0", "ghcr.io/llm-d/llm-d-routing-sidecar:v0.9.0");
        DesiredDeployment newer =
                withDefaults(spec, "vllm/vllm-openai:v0.11.0", "ghcr.io/llm-d/llm-d-routing-sidecar:v0.10.0");
        DesiredRole decode = older.roles().get(1);
        Pod proxied = RENDERER.render(new MemberSlot(older, decode, 0, 0), "h");
        Pod prefill = RENDERER.render(new MemberSlot(older, older.roles().get(0), 0, 0), "h");

        assertThat(RENDERER.configHash(older, decode))
                .isEqualTo(RENDERER.configHash(newer, newer.roles().get(1)));
        assertThat(proxied.getMetadata().getAnnotations())
                .containsEntry(Annotations.ROUTING_PROXY_IMAGE, "ghcr.io/llm-d/llm-d-routing-sidecar:v0.9.0");
        assertThat(prefill.getMetadata().getAnnotations()).doesNotContainKey(Annotations.ROUTING_PROXY_IMAGE);
        assertThat(RENDERER.imageOutdated(proxied, older, decode)).isFalse();
        assertThat(RENDERER.imageOutdated(proxied, newer, newer.roles().get(1))).isTrue();
        assertThat(RENDERER.imageOutdated(prefill, newer, newer.roles().get(0))).isFalse();
    }

    @Test
    void twoReleasesThatDifferOnlyInTheirDefaultImageRenderTheSameConfigHashAndEachPodRecordsItsDefault() {
        Specs.Deployment spec = deployment("qwen", "vLLM").role(role("server").size(2));
        DesiredDeployment older = withDefaultImage(spec, "vllm/vllm-openai:v0.10.0");
        DesiredDeployment newer = withDefaultImage(spec, "vllm/vllm-openai:v0.11.0");
        Pod createdByTheOlder =
                RENDERER.render(new MemberSlot(older, older.roles().get(0), 0, 0), "h");

        assertThat(RENDERER.configHash(older, older.roles().get(0)))
                .isEqualTo(RENDERER.configHash(newer, newer.roles().get(0)));
        assertThat(createdByTheOlder.getMetadata().getAnnotations())
                .containsEntry(Annotations.DEFAULT_IMAGE, "vllm/vllm-openai:v0.10.0");
        assertThat(main(createdByTheOlder).getImage()).isEqualTo("vllm/vllm-openai:v0.10.0");
        assertThat(RENDERER.imageOutdated(
                        createdByTheOlder, older, older.roles().get(0)))
                .isFalse();
        assertThat(RENDERER.imageOutdated(
                        createdByTheOlder, newer, newer.roles().get(0)))
                .isTrue();
    }

    static Stream<Arguments> engineShutdowns() {
        return Stream.of(
                Arguments.of(
                        "vLLM at the default release, default grace",
                        deployment("qwen", "vLLM").role(role("server")),
                        List.of("19"),
                        true),
                Arguments.of(
                        "vLLM's first release with the flag",
                        deployment("qwen", "vLLM")
                                .role(role("server")
                                        .image("vllm/vllm-openai:v0.18.0")
                                        .grace(60)),
                        List.of("49"),
                        true),
                Arguments.of(
                        "a tag naming no release is taken as current",
                        deployment("qwen", "vLLM").role(role("server").image("registry.example/vllm:nightly")),
                        List.of("19"),
                        true),
                Arguments.of(
                        "vLLM before the flag",
                        deployment("qwen", "vLLM").role(role("server").image("vllm/vllm-openai:v0.17.1")),
                        List.of(),
                        false),
                Arguments.of(
                        "the shortest grace the spec takes",
                        deployment("qwen", "vLLM").role(role("server").grace(15)),
                        List.of("4"),
                        true),
                Arguments.of(
                        "the role sets it itself",
                        deployment("qwen", "vLLM").role(role("server").extraArgs("--shutdown-timeout", "7")),
                        List.of("7"),
                        false),
                Arguments.of(
                        "the role sets it with =",
                        deployment("qwen", "vLLM").role(role("server").extraArgs("--shutdown-timeout=7")),
                        List.of(),
                        false),
                Arguments.of(
                        "the role sets it underscored",
                        deployment("qwen", "vLLM").role(role("server").extraArgs("--shutdown_timeout", "7")),
                        List.of(),
                        false),
                Arguments.of(
                        "SGLang drains on SIGTERM by itself",
                        deployment("qwen", "SGLang").role(role("server")),
                        List.of(),
                        false),
                Arguments.of(
                        "a role that sets command",
                        deployment("qwen", "vLLM").role(role("server").command("/bin/my-engine")),
                        List.of(),
                        false));
    }

    /**
     * The values after every --shutdown-timeout on the engine's command line, and whether the operator rendered it: the
     * timeline and the Pod then record it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("engineShutdowns")
    void vllmIsGivenItsOwnDrainSizedFromTheGraceWhereItsReleaseHasOneAndTheRoleSetsNone(
            String title, Specs.Deployment spec, List<String> values, boolean operators) {
        DesiredDeployment desired = spec.desired();
        Pod pod = render(spec, 0, 0);
        List<String> command = main(pod).getCommand();
        List<String> found = new ArrayList<>();
        for (int i = 0; i + 1 < command.size(); i++) {
            if (command.get(i).equals("--shutdown-timeout")) {
                found.add(command.get(i + 1));
            }
        }

        assertThat(found).isEqualTo(values);
        assertThat(RENDERER.drainTimeline(desired, desired.roles().get(0))
                        .engineShutdown()
                        .map(String::valueOf))
                .isEqualTo(operators ? Optional.of(values.get(0)) : Optional.empty());
        assertThat(pod.getMetadata().getAnnotations().get(Annotations.ENGINE_SHUTDOWN))
                .isEqualTo(operators ? values.get(0) : null);
    }

    @Test
    void aDefaultImageThatBringsVllmsOwnDrainTurnsNoReplicaOverButAGraceEditDoes() {
        Specs.Deployment spec = deployment("qwen", "vLLM").role(role("server").size(2));
        DesiredDeployment before = withDefaultImage(spec, "vllm/vllm-openai:v0.17.1");
        DesiredDeployment after = withDefaultImage(spec, "vllm/vllm-openai:v0.18.0");
        Specs.Deployment longer =
                deployment("qwen", "vLLM").role(role("server").size(2).grace(31));
        DesiredDeployment afterWithLongerGrace = withDefaultImage(longer, "vllm/vllm-openai:v0.18.0");
        DesiredDeployment beforeWithLongerGrace = withDefaultImage(longer, "vllm/vllm-openai:v0.17.1");

        assertThat(main(RENDERER.render(new MemberSlot(after, after.roles().get(0), 0, 0), "h"))
                        .getCommand())
                .contains("--shutdown-timeout");
        assertThat(RENDERER.configHash(after, after.roles().get(0)))
                .isEqualTo(RENDERER.configHash(before, before.roles().get(0)));
        assertThat(RENDERER.configHash(
                        afterWithLongerGrace, afterWithLongerGrace.roles().get(0)))
                .isNotEqualTo(RENDERER.configHash(after, after.roles().get(0)))
                .isEqualTo(RENDERER.configHash(
                        beforeWithLongerGrace, beforeWithLongerGrace.roles().get(0)));
    }

    @Test
    void anImageTheSpecNamesIsInTheHashAndNeverOutdatedByADefault() {
        Specs.Deployment pinned = deployment("qwen", "vLLM").role(role("server").image("vllm/vllm-openai:v0.10.0"));
        DesiredDeployment d = withDefaultImage(pinned, "vllm/vllm-openai:v0.11.0");
        Pod pod = RENDERER.render(new MemberSlot(d, d.roles().get(0), 0, 0), "h");
        DesiredDeployment edited = withDefaultImage(
                deployment("qwen", "vLLM").role(role("server").image("vllm/vllm-openai:v0.12.0")),
                "vllm/vllm-openai:v0.11.0");

        assertThat(pod.getMetadata().getAnnotations()).doesNotContainKey(Annotations.DEFAULT_IMAGE);
        assertThat(RENDERER.imageOutdated(pod, d, d.roles().get(0))).isFalse();
        assertThat(RENDERER.configHash(edited, edited.roles().get(0)))
                .isNotEqualTo(RENDERER.configHash(d, d.roles().get(0)));
        DesiredDeployment unpinned =
                withDefaultImage(deployment("qwen", "vLLM").role(role("server")), "vllm/vllm-openai:v0.10.0");
        assertThat(RENDERER.configHashOnDefault(d, d.roles().get(0)))
                .as("what the role would hash to on the default it names")
                .contains(RENDERER.configHash(unpinned, unpinned.roles().get(0)));
        assertThat(RENDERER.configHashOnDefault(unpinned, unpinned.roles().get(0)))
                .isEmpty();
    }

    @Test
    void theHooksScriptIsMountedFromTheDeploymentsConfigMapAndNoneOfItsTextIsInThePod() throws Exception {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server")).desired();
        Pod pod = RENDERER.render(new MemberSlot(d, d.roles().get(0), 0, 0), "h");
        String name = "qwen-drain-hook-" + DrainHook.REVISION;

        assertThat(pod.getSpec().getVolumes()).singleElement().satisfies(v -> {
            assertThat(v.getName()).isEqualTo(PodRenderer.DRAIN_HOOK_VOLUME);
            assertThat(v.getConfigMap().getName()).isEqualTo(name);
            assertThat(v.getConfigMap().getOptional())
                    .as("the kubelet holds the engine's start until the script is there")
                    .isFalse();
        });
        assertThat(main(pod).getVolumeMounts()).singleElement().satisfies(m -> {
            assertThat(m.getMountPath()).isEqualTo(DrainHook.MOUNT_PATH);
            assertThat(m.getReadOnly()).isTrue();
        });
        assertThat(PodRenderer.hookConfigMapOf(pod)).contains(name);
        String json = new ObjectMapper().writeValueAsString(pod);
        assertThat(json).doesNotContain("def drain(").hasSizeLessThan(6 * 1024);
        ConfigMap script = RENDERER.hookConfigMap(d);
        assertThat(script.getMetadata().getName()).isEqualTo(name);
        assertThat(script.getImmutable()).isTrue();
        assertThat(script.getData()).containsExactly(Map.entry(DrainHook.FILE, DrainHook.SCRIPT));
        assertThat(script.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getName()).isEqualTo("qwen"));
    }

    /**
     * Pods of releases that carried the script in the command keep their config hash under this one: an operator
     * upgrade that moves the script into a ConfigMap turns no replica over.
     */
    @Test
    void aReplicaOfAReleaseThatCarriedTheScriptInItsCommandHasTheSameConfigHash() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").size(2)).desired();
        List<Pod> mounted = renderedByARelease(d, DrainHook.SCRIPT);
        List<Pod> inline = renderedByARelease(d, DrainHook.SCRIPT);
        for (Pod pod : inline) {
            List<String> hook = main(pod).getLifecycle().getPreStop().getExec().getCommand();
            List<String> older = new ArrayList<>(List.of("python3", "-c", "print('an older hook')"));
            older.addAll(hook.subList(5, hook.size()));
            main(pod).getLifecycle().getPreStop().getExec().setCommand(older);
            main(pod).getVolumeMounts().removeIf(m -> m.getName().equals(PodRenderer.DRAIN_HOOK_VOLUME));
            pod.getSpec().getVolumes().removeIf(v -> v.getName().equals(PodRenderer.DRAIN_HOOK_VOLUME));
        }

        assertThat(PodRenderer.hashOf(inline)).isEqualTo(PodRenderer.hashOf(mounted));
    }

    @Test
    void twoReleasesThatDifferOnlyInTheirHookScriptRenderTheSameConfigHash() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").size(2)).desired();
        List<Pod> older = renderedByARelease(d, "print('an older hook')");
        List<Pod> newer = renderedByARelease(d, DrainHook.SCRIPT);
        older.forEach(p -> p.getMetadata().getAnnotations().remove(Annotations.HOOK_REVISION));
        newer.forEach(p -> p.getMetadata().getAnnotations().remove(Annotations.HOOK_REVISION));

        assertThat(PodRenderer.hashOf(older))
                .isEqualTo(PodRenderer.hashOf(newer))
                .isEqualTo(RENDERER.configHash(d, d.roles().get(0)));
    }

    @Test
    void whatTheSpecSaysOfTheHookStillTurnsReplicasOver() {
        DesiredDeployment thirty =
                deployment("qwen", "vLLM").role(role("server")).desired();
        DesiredDeployment sixty =
                deployment("qwen", "vLLM").role(role("server").grace(60)).desired();

        assertThat(RENDERER.configHash(sixty, sixty.roles().get(0)))
                .as("the hook's --grace comes from the spec")
                .isNotEqualTo(RENDERER.configHash(thirty, thirty.roles().get(0)));
    }

    @Test
    void eachHookedPodRecordsItsHookRevisionAndAnOlderOneIsTold() {
        DesiredDeployment d = deployment("qwen", "vLLM").role(role("server")).desired();
        Pod current = RENDERER.render(new MemberSlot(d, d.roles().get(0), 0, 0), "h");
        Pod older = renderedByARelease(d, "print('an older hook')").get(0);
        Pod unknown = renderedByARelease(d, "print('no record')").get(0);
        unknown.getMetadata().getAnnotations().remove(Annotations.HOOK_REVISION);
        DesiredDeployment takeOver = deployment("qwen", "vLLM")
                .role(role("server").command("my-engine"))
                .desired();
        Pod unhooked = RENDERER.render(new MemberSlot(takeOver, takeOver.roles().get(0), 0, 0), "h");

        assertThat(current.getMetadata().getAnnotations()).containsEntry(Annotations.HOOK_REVISION, DrainHook.REVISION);
        assertThat(List.of(current, older, unknown, unhooked))
                .extracting(p -> RENDERER.hookOutdated(p, d))
                .containsExactly(false, true, true, false);
        assertThat(unhooked.getMetadata().getAnnotations()).doesNotContainKey(Annotations.HOOK_REVISION);
    }

    @Test
    void aFollowerWhoseHookReadsItsOwnLoopbackIsOutdatedWithoutTurningTheReplicaOver() {
        DesiredDeployment d =
                deployment("qwen", "vLLM").role(role("server").size(2)).desired();
        List<Pod> current = renderedByARelease(d, DrainHook.SCRIPT);
        List<Pod> readingLoopback = renderedByARelease(d, DrainHook.SCRIPT);
        List<String> followerHook = main(readingLoopback.get(1))
                .getLifecycle()
                .getPreStop()
                .getExec()
                .getCommand();
        followerHook.set(followerHook.indexOf("--host") + 1, EnginePod.LOOPBACK);

        assertThat(PodRenderer.hashOf(readingLoopback))
                .as("where a hook reads is the operator's choice, not the spec's")
                .isEqualTo(PodRenderer.hashOf(current));
        assertThat(readingLoopback).extracting(p -> RENDERER.hookOutdated(p, d)).containsExactly(false, true);
        assertThat(current).extracting(p -> RENDERER.hookOutdated(p, d)).containsExactly(false, false);
    }

    private static List<String> hookHosts(Pod pod) {
        return DrainHook.hosts(main(pod).getLifecycle().getPreStop().getExec().getCommand());
    }

    /**
     * SGLang's data-parallel groups that start on a follower count their requests on that follower's page alone, so
     * every member's hook sums every member, and every scheduler is told to record.
     */
    @Test
    void everyMemberOfAnSglangReplicaWithDataParallelGroupsAcrossItsPodsReadsEveryMember() {
        DesiredDeployment d = deployment("qwen", "SGLang")
                .role(role("big").size(3).extraArgs("--tp", "24", "--dp-size", "3", "--enable-dp-attention"))
                .desired();
        List<Pod> members = renderedByARelease(d, DrainHook.SCRIPT);

        assertThat(members)
                .extracting(PodRendererTest::hookHosts)
                .containsExactly(
                        List.of("127.0.0.1", "qwen-big-r0-m1.qwen-big-r0", "qwen-big-r0-m2.qwen-big-r0"),
                        List.of("127.0.0.1", "qwen-big-r0-m0.qwen-big-r0", "qwen-big-r0-m2.qwen-big-r0"),
                        List.of("127.0.0.1", "qwen-big-r0-m0.qwen-big-r0", "qwen-big-r0-m1.qwen-big-r0"));
        assertThat(members)
                .allSatisfy(p -> assertThat(main(p).getCommand())
                        .containsSubsequence("--enable-metrics", "--enable-metrics-for-all-schedulers", "--tp"));
        assertThat(members).extracting(p -> RENDERER.hookOutdated(p, d)).containsOnly(false);
    }

    @Test
    void aRoleThatAsksEverySchedulerToRecordItselfIsNotToldTwice() {
        DesiredDeployment d = deployment("qwen", "SGLang")
                .role(role("big").size(2).extraArgs("--dp", "2", "--enable-metrics-for-all-schedulers"))
                .desired();

        assertThat(main(renderedByARelease(d, DrainHook.SCRIPT).get(0)).getCommand())
                .filteredOn("--enable-metrics-for-all-schedulers"::equals)
                .hasSize(1);
    }

    /**
     * Members created by a release whose hooks read one engine are told outdated, and the hosts are the operator's
     * choice: the replica is not turned over for them.
     */
    @Test
    void aDataParallelReplicaWhoseHooksReadOneEngineIsOutdatedWithoutTurningItOver() {
        DesiredDeployment d = deployment("qwen", "SGLang")
                .role(role("big").size(2).extraArgs("--dp-size", "2"))
                .desired();
        List<Pod> current = renderedByARelease(d, DrainHook.SCRIPT);
        List<Pod> readingOne = renderedByARelease(d, DrainHook.SCRIPT);
        for (Pod member : readingOne) {
            List<String> hook =
                    main(member).getLifecycle().getPreStop().getExec().getCommand();
            int second = hook.lastIndexOf("--host");
            hook.remove(second + 1);
            hook.remove(second);
        }

        assertThat(readingOne)
                .extracting(PodRendererTest::hookHosts)
                .containsExactly(List.of("127.0.0.1"), List.of("127.0.0.1"));
        assertThat(PodRenderer.hashOf(readingOne)).isEqualTo(PodRenderer.hashOf(current));
        assertThat(readingOne).extracting(p -> RENDERER.hookOutdated(p, d)).containsExactly(true, true);
    }
}
