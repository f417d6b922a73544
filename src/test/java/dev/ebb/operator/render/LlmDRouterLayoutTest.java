package dev.ebb.operator.render;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.FieldError;
import dev.ebb.operator.api.Platform;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.config.EbbConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.smallrye.config.WithDefault;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * llm-d's router rendered as its v0.10.0 standalone chart runs it: the picker with Envoy beside it, started as the
 * picker's own source requires, each container startable under runAsNonRoot, and P/D wired by role label.
 */
class LlmDRouterLayoutTest {
    private static final YAMLMapper YAML = new YAMLMapper();

    /**
     * Plugin types the picker registers at llm-d-router v0.10.0 (cmd/epp/runner/runner.go, registerInTreePlugins; the
     * type names from each plugin's own constant), as far as the layout uses them.
     */
    private static final Set<String> REGISTERED_PLUGIN_TYPES = Set.of(
            "queue-scorer",
            "kv-cache-utilization-scorer",
            "prefix-cache-scorer",
            "approx-prefix-cache-producer",
            "prefill-filter",
            "decode-filter",
            "max-score-picker",
            "disagg-profile-handler",
            "prefix-based-pd-decider");

    private static DesiredDeployment serving(String engine) {
        return deployment("qwen", engine)
                .namespace("team-a")
                .router("llm-d-router")
                .role(role("server").port(8100))
                .desired();
    }

    private static DesiredDeployment disaggregated(String engine, int prefillPort, int decodePort) {
        return deployment("qwen", engine)
                .scaling("prefill")
                .namespace("team-a")
                .router("llm-d-router")
                .role(role("prefill").kind("Prefill").port(prefillPort))
                .role(role("decode").kind("Decode").port(decodePort))
                .desired();
    }

    private static Container container(List<HasMetadata> objects, String name) {
        return RenderedRouter.podSpec(objects).getContainers().stream()
                .filter(c -> c.getName().equals(name))
                .findFirst()
                .orElseThrow();
    }

    private static JsonNode file(List<HasMetadata> objects, String name) throws Exception {
        String text = RenderedRouter.only(objects, ConfigMap.class).getData().get(name);
        assertThat(text).as(name).isNotNull();
        return YAML.readTree(text);
    }

    private static String arg(Container container, String flag) {
        return container.getArgs().stream()
                .filter(a -> a.startsWith(flag + "="))
                .map(a -> a.substring(flag.length() + 1))
                .findFirst()
                .orElseThrow(() -> new AssertionError(flag + " not among " + container.getArgs()));
    }

    private static Stream<JsonNode> each(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false);
    }

    private static JsonNode named(JsonNode array, String name) {
        return each(array)
                .filter(n -> n.path("name").asText().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in " + array));
    }

    private static Pod leader(DesiredDeployment deployment, int role) {
        return RenderedRouter.member(deployment, deployment.roles().get(role).name(), 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"llmDRouter", "llmDRouterProxy", "routingProxy"})
    void everyImageTheRouterRunsIsAPinnedRelease(String setting) throws Exception {
        String image = EbbConfig.Images.class
                .getMethod(setting)
                .getAnnotation(WithDefault.class)
                .value();

        assertThat(image)
                .matches("[^:@]+(:[^:/]+|@sha256:[0-9a-f]{64})")
                .doesNotEndWith(":latest")
                .doesNotEndWith(":main");
    }

    @Test
    void thePodHoldsThePickerAndEnvoyEachOnTheImageConfiguredForIt() {
        List<HasMetadata> objects = RouterRenderer.render(serving("vLLM"));

        assertThat(RenderedRouter.podSpec(objects).getContainers())
                .extracting(Container::getName)
                .containsExactly("epp", "envoy-proxy");
        assertThat(container(objects, "epp").getImage()).isEqualTo("default/llm-d-router:test");
        assertThat(container(objects, "envoy-proxy").getImage()).isEqualTo("default/router-proxy:test");
        // the picker's entrypoint is the picker itself; Envoy's Ubuntu image starts an entrypoint script, so envoy is
        // named
        assertThat(container(objects, "epp").getCommand()).isEmpty();
        assertThat(container(objects, "envoy-proxy").getCommand()).containsExactly("/usr/local/bin/envoy");
    }

    @Test
    void thePickerKnowsItsPodAndNamespaceFromTheDownwardApi() {
        Container picker = container(RouterRenderer.render(serving("vLLM")), "epp");

        assertThat(picker.getEnv())
                .extracting(EnvVar::getName, e -> e.getValueFrom().getFieldRef().getFieldPath())
                .contains(tuple("POD_NAME", "metadata.name"), tuple("NAMESPACE", "metadata.namespace"));
    }

    @Test
    void thePickerDiscoversOnlyTheServingLeadersAndServesPlaintextToItsEnvoyAndMetricsWithoutAToken() {
        Container picker = container(RouterRenderer.render(serving("SGLang")), "epp");

        assertThat(arg(picker, "--endpoint-selector"))
                .isEqualTo(
                        "serving.ebb.dev/deployment=qwen,serving.ebb.dev/serving=true,serving.ebb.dev/member-index=0");
        assertThat(arg(picker, "--endpoint-target-ports")).isEqualTo("8100");
        assertThat(arg(picker, "--config-file")).isEqualTo(RouterLayout.CONFIG_DIR + "/epp-config.yaml");
        assertThat(arg(picker, "--grpc-port")).isEqualTo("9002");
        assertThat(arg(picker, "--grpc-health-port")).isEqualTo("9003");
        assertThat(arg(picker, "--metrics-port")).isEqualTo("9090");
        assertThat(arg(picker, "--metrics-endpoint-auth")).isEqualTo("false");
        assertThat(arg(picker, "--secure-serving")).isEqualTo("false");
        assertThat(arg(picker, "--health-checking")).isEqualTo("true");
        assertThat(picker.getArgs())
                .noneMatch(a -> a.startsWith("--pool-name") || a.startsWith("--ha-enable-leader-election"));
        assertThat(picker.getReadinessProbe().getGrpc().getPort()).isEqualTo(9003);
        assertThat(picker.getVolumeMounts())
                .singleElement()
                .satisfies(m -> assertThat(m.getMountPath()).isEqualTo(RouterLayout.CONFIG_DIR));
    }

    @Test
    void clientsReachEnvoyOn8081WhichTheStatusNamesAndTheOperatorReadsThePickersMetrics() {
        DesiredDeployment deployment = serving("vLLM");
        List<HasMetadata> objects = RouterRenderer.render(deployment);
        List<ServicePort> ports =
                RenderedRouter.only(objects, Service.class).getSpec().getPorts();

        assertThat(ports)
                .extracting(ServicePort::getName, ServicePort::getPort)
                .containsExactly(tuple("http", 8081), tuple("metrics", 9090));
        assertThat(RouterRenderer.clientAddress(deployment)).isEqualTo("http://qwen-router.team-a.svc:8081");
        assertThat(container(objects, "envoy-proxy").getPorts())
                .extracting(ContainerPort::getContainerPort)
                .contains(8081);
        assertThat(container(objects, "epp").getPorts())
                .extracting(ContainerPort::getContainerPort)
                .containsExactlyInAnyOrder(9002, 9003, 9090);
        RouterAdmin admin = RouterAdmin.of(deployment.router().orElseThrow().kind());
        assertThat(admin).isEqualTo(new RouterAdmin(9090, "/metrics"));
    }

    @Test
    void everyContainerOfTheRouterAndOfADirectDecoderIsStartableUnderRunAsNonRoot() {
        DesiredDeployment deployment = disaggregated("vLLM", 8000, 8000);
        PodSpec router = RenderedRouter.podSpec(RouterRenderer.render(deployment));
        Pod decoder = leader(deployment, 1);
        Pod oldClusterDecoder = leader(deployment.on(Platform.BEFORE_NATIVE_SIDECARS), 1);

        assertThat(router.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(router.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
        router.getContainers().forEach(c -> assertStartable(router, c));
        Container proxy = decoder.getSpec().getInitContainers().get(0);
        assertThat(proxy.getName()).isEqualTo(RoutingProxy.CONTAINER);
        assertStartable(decoder.getSpec(), proxy);
        oldClusterDecoder.getSpec().getContainers().forEach(c -> assertStartable(oldClusterDecoder.getSpec(), c));
    }

    /** The kubelet refuses a container that must not run as root unless it knows, by number, a user other than 0. */
    private static void assertStartable(PodSpec pod, Container container) {
        SecurityContext own = container.getSecurityContext();
        Boolean nonRoot = Optional.ofNullable(own)
                .map(SecurityContext::getRunAsNonRoot)
                .orElse(
                        pod.getSecurityContext() == null
                                ? null
                                : pod.getSecurityContext().getRunAsNonRoot());
        if (Boolean.TRUE.equals(nonRoot)) {
            Long user = Optional.ofNullable(own)
                    .map(SecurityContext::getRunAsUser)
                    .orElse(
                            pod.getSecurityContext() == null
                                    ? null
                                    : pod.getSecurityContext().getRunAsUser());
            assertThat(user).as(container.getName() + "'s user").isNotNull().isNotZero();
        }
    }

    @Test
    void envoysConfigIsTheChartsSidecarProxyAskingThePickerOverLoopbackAndRoutingToTheEndpointItNames()
            throws Exception {
        List<HasMetadata> objects = RouterRenderer.render(serving("vLLM"));
        JsonNode envoy = file(objects, "envoy.yaml");
        Container proxy = container(objects, "envoy-proxy");
        JsonNode resources = envoy.path("static_resources");

        assertThat(proxy.getArgs()).containsSubsequence("-c", RouterLayout.CONFIG_DIR + "/envoy.yaml");
        assertThat(proxy.getVolumeMounts())
                .singleElement()
                .satisfies(m -> assertThat(m.getMountPath()).isEqualTo(RouterLayout.CONFIG_DIR));
        assertThat(envoy.at("/admin/address/socket_address/address").asText()).isEqualTo("127.0.0.1");

        JsonNode clients = named(resources.path("listeners"), "vllm");
        assertThat(clients.at("/address/socket_address/port_value").asInt()).isEqualTo(8081);
        JsonNode manager = clients.at("/filter_chains/0/filters/0/typed_config");
        assertThat(manager.at("/route_config/virtual_hosts/0/routes/0/route/cluster")
                        .asText())
                .isEqualTo("original_destination_cluster");
        JsonNode extProc = named(manager.path("http_filters"), "envoy.filters.http.ext_proc")
                .path("typed_config");
        assertThat(extProc.at("/grpc_service/envoy_grpc/cluster_name").asText()).isEqualTo("ext_proc");
        assertThat(extProc.at("/processing_mode/request_body_mode").asText()).isEqualTo("FULL_DUPLEX_STREAMED");
        assertThat(extProc.at("/processing_mode/response_body_mode").asText()).isEqualTo("FULL_DUPLEX_STREAMED");
        assertThat(extProc.path("failure_mode_allow").asBoolean(true)).isFalse();
        assertThat(each(manager.path("http_filters"))
                        .map(f -> f.path("name").asText())
                        .toList())
                .containsExactly("envoy.filters.http.ext_proc", "envoy.filters.http.router");

        JsonNode picker = named(resources.path("clusters"), "ext_proc");
        assertThat(picker.at("/load_assignment/endpoints/0/lb_endpoints/0/endpoint/address/socket_address/address")
                        .asText())
                .isEqualTo("127.0.0.1");
        assertThat(picker.at("/load_assignment/endpoints/0/lb_endpoints/0/endpoint/address/socket_address/port_value")
                        .asInt())
                .isEqualTo(9002);
        // plaintext on both sides: no TLS socket towards the picker, which serves without TLS
        assertThat(picker.has("transport_socket")).isFalse();
        assertThat(arg(container(objects, "epp"), "--secure-serving")).isEqualTo("false");
        assertThat(picker.at("/typed_extension_protocol_options").toString()).contains("http2_protocol_options");

        JsonNode upstream = named(resources.path("clusters"), "original_destination_cluster");
        assertThat(upstream.path("type").asText()).isEqualTo("ORIGINAL_DST");
        assertThat(upstream.at("/original_dst_lb_config/use_http_header").asBoolean())
                .isTrue();
        assertThat(upstream.at("/original_dst_lb_config/http_header_name").asText())
                .isEqualTo("x-gateway-destination-endpoint");
    }

    @Test
    void envoyIsReadyWhenItsReadinessListenerAnswers() throws Exception {
        List<HasMetadata> objects = RouterRenderer.render(serving("vLLM"));
        JsonNode ready =
                named(file(objects, "envoy.yaml").at("/static_resources/listeners"), "envoy-proxy-ready-0.0.0.0-19001");
        Container proxy = container(objects, "envoy-proxy");

        assertThat(ready.at("/address/socket_address/port_value").asInt()).isEqualTo(19001);
        JsonNode health = named(
                ready.at("/filter_chains/0/filters/0/typed_config/http_filters"), "envoy.filters.http.health_check");
        assertThat(health.at("/typed_config/headers/0/string_match/exact").asText())
                .isEqualTo("/ready");
        assertThat(proxy.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/ready");
        assertThat(proxy.getReadinessProbe().getHttpGet().getPort().getIntVal()).isEqualTo(19001);
    }

    @ParameterizedTest(name = "{0} with {1}")
    @CsvSource({
        "vLLM, serving, default",
        "SGLang, serving, default",
        "vLLM, disaggregated, prefill;decode",
        "SGLang, disaggregated, prefill;decode"
    })
    void thePickersConfigIsAtTheReleasedApiAndNamesOnlyRegisteredPlugins(String engine, String shape, String profiles)
            throws Exception {
        DesiredDeployment deployment = shape.equals("serving") ? serving(engine) : disaggregated(engine, 8000, 8000);
        JsonNode config = file(RouterRenderer.render(deployment), "epp-config.yaml");

        assertThat(config.path("apiVersion").asText()).isEqualTo("llm-d.ai/v1alpha1");
        assertThat(config.path("kind").asText()).isEqualTo("EndpointPickerConfig");
        List<String> declared = each(config.path("plugins"))
                .map(p ->
                        p.has("name") ? p.path("name").asText() : p.path("type").asText())
                .toList();
        assertThat(each(config.path("plugins")).map(p -> p.path("type").asText()))
                .isSubsetOf(REGISTERED_PLUGIN_TYPES);
        assertThat(each(config.path("schedulingProfiles"))
                        .map(p -> p.path("name").asText()))
                .containsExactly(profiles.split(";"));
        assertThat(each(config.path("schedulingProfiles"))
                        .flatMap(p -> each(p.path("plugins")))
                        .map(r -> r.path("pluginRef").asText()))
                .isSubsetOf(declared);
    }

    @Test
    void prefillAndDecodeAreEachPickedAmongTheirOwnRole() throws Exception {
        JsonNode config = file(RouterRenderer.render(disaggregated("vLLM", 8000, 8000)), "epp-config.yaml");

        JsonNode handler = each(config.path("plugins"))
                .filter(p -> p.path("type").asText().equals("disagg-profile-handler"))
                .findFirst()
                .orElseThrow();
        assertThat(handler.at("/parameters/deciders/prefill").asText()).isEqualTo("prefix-based-pd-decider");
        assertThat(each(named(config.path("schedulingProfiles"), "prefill").path("plugins"))
                        .map(r -> r.path("pluginRef").asText()))
                .contains("prefill-filter")
                .doesNotContain("decode-filter");
        assertThat(each(named(config.path("schedulingProfiles"), "decode").path("plugins"))
                        .map(r -> r.path("pluginRef").asText()))
                .contains("decode-filter")
                .doesNotContain("prefill-filter");
    }

    @ParameterizedTest(name = "{0} {1} under {2}")
    @CsvSource({
        "vLLM, Prefill, llm-d-router, prefill, ",
        "vLLM, Decode, llm-d-router, decode, ",
        "SGLang, Prefill, llm-d-router, prefill, sglang",
        "SGLang, Decode, llm-d-router, decode, sglang",
        "SGLang, Server, llm-d-router, , sglang",
        "vLLM, Server, llm-d-router, , ",
        "vLLM, Server, vllm-router, , ",
        "SGLang, Prefill, sglang-gateway, , "
    })
    void memberPodsCarryTheRoleAndEngineLabelsThePickerFiltersAndReadsBy(
            String engine, String kind, String router, String role, String engineType) {
        Specs.Deployment spec = deployment("qwen", engine).router(router);
        if (kind.equals("Server")) {
            spec.role(role("server"));
        } else {
            spec.scaling("decode")
                    .role(role("prefill").kind("Prefill"))
                    .role(role("decode").kind("Decode"));
        }
        DesiredDeployment deployment = spec.desired();
        Pod pod = leader(deployment, kind.equals("Decode") ? 1 : 0);
        Map<String, String> labels = pod.getMetadata().getLabels();

        if (role == null) {
            assertThat(labels).doesNotContainKey("llm-d.ai/role");
        } else {
            assertThat(labels).containsEntry("llm-d.ai/role", role);
        }
        if (engineType == null) {
            assertThat(labels).doesNotContainKey("llm-d.ai/engine-type");
        } else {
            assertThat(labels).containsEntry("llm-d.ai/engine-type", engineType);
        }
    }

    @ParameterizedTest(name = "prefill on {0}, decode on {1}")
    @CsvSource({"8000, 8000, 8000, , ", "8000, 8100, '8000,8100', 8000, 8100", "9000, 8000, '9000,8000', 9000, 8000"})
    void thePickerTargetsEachRolesOwnPortAndEachPodNamesItsOwnWhenTheyDiffer(
            int prefillPort, int decodePort, String targetPorts, String prefillActive, String decodeActive) {
        DesiredDeployment deployment = disaggregated("vLLM", prefillPort, decodePort);

        assertThat(arg(container(RouterRenderer.render(deployment), "epp"), "--endpoint-target-ports"))
                .isEqualTo(targetPorts);
        assertThat(Optional.ofNullable(
                        leader(deployment, 0).getMetadata().getAnnotations().get("llm-d.ai/active-ports")))
                .isEqualTo(Optional.ofNullable(prefillActive));
        assertThat(Optional.ofNullable(
                        leader(deployment, 1).getMetadata().getAnnotations().get("llm-d.ai/active-ports")))
                .isEqualTo(Optional.ofNullable(decodeActive));
        // the decoder's proxy takes the role's port, so the picker's target is the proxy
        assertThat(leader(deployment, 1).getSpec().getInitContainers().get(0).getArgs())
                .contains("--port=" + decodePort);
    }

    /** The errors admission gives the spec; empty when it accepts it. */
    private static List<FieldError> refusals(Specs.Deployment spec) {
        return Specs.RESOLVER.resolve(spec.build()) instanceof Resolution.Rejected rejected
                ? rejected.errors()
                : List.of();
    }

    @ParameterizedTest(name = "{0} distinct ports")
    @CsvSource({"1, false", "8, false", "9, true", "10, true"})
    void morePortsThanThePickerTakesAreRefusedAtAdmission(int ports, boolean refused) {
        Specs.Deployment spec = deployment("qwen", "vLLM").router("llm-d-router");
        IntStream.range(0, ports).forEach(i -> spec.role(role("server" + i).port(8000 + i)));

        List<FieldError> errors = refusals(spec);

        assertThat(!errors.isEmpty()).isEqualTo(refused);
        errors.forEach(e -> assertThat(e.field()).isEqualTo("spec.roles"));
        errors.forEach(e -> assertThat(e.message()).contains("at most 8"));
    }

    @ParameterizedTest(name = "prefill on {0}, decode on {1}")
    @CsvSource({"8000, 8000, false", "8200, 8000, false", "8000, 8200, true"})
    void aDirectDecoderOnThePortItsEngineMovesToIsRefusedAtAdmission(int prefillPort, int decodePort, boolean refused) {
        List<FieldError> errors = refusals(deployment("qwen", "vLLM")
                .scaling("prefill")
                .router("llm-d-router")
                .role(role("prefill").kind("Prefill").port(prefillPort))
                .role(role("decode").kind("Decode").port(decodePort)));

        assertThat(!errors.isEmpty()).isEqualTo(refused);
        errors.forEach(e -> assertThat(e.field()).isEqualTo("spec.roles[1].port"));
        errors.forEach(e -> assertThat(e.message()).contains("Decode").contains("8200"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "--ssl-certfile=/tls/tls.crt, true",
        "--ssl-certfile, true",
        "--ssl-certfile-x=1, false",
        "--max-model-len=4096, false"
    })
    void anEngineServingTlsIsRefusedAtAdmission(String extraArg, boolean refused) {
        List<FieldError> errors = refusals(deployment("qwen", "vLLM")
                .router("llm-d-router")
                .role(role("server").extraArgs(extraArg)));

        assertThat(!errors.isEmpty()).isEqualTo(refused);
        errors.forEach(e -> assertThat(e.field()).isEqualTo("spec.roles[0].extraArgs"));
        errors.forEach(e -> assertThat(e.message()).contains("TLS"));
    }

    @Test
    void theRoutersAccountMayOnlyReadPods() {
        List<HasMetadata> objects = RouterRenderer.render(disaggregated("SGLang", 8000, 8000));

        assertThat(RenderedRouter.only(objects, Role.class).getRules())
                .singleElement()
                .satisfies(rule -> {
                    assertThat(rule.getApiGroups()).containsExactly("");
                    assertThat(rule.getResources()).containsExactly("pods");
                    assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
                });
    }

    @Test
    void theUsersExtraArgsGoToThePicker() {
        DesiredDeployment base = serving("vLLM");
        DesiredRouter router = base.router().orElseThrow();
        DesiredDeployment withArgs = new DesiredDeployment(
                base.owner(),
                base.engine(),
                base.modelName(),
                base.modelPath(),
                Optional.of(new DesiredRouter(
                        router.kind(), router.replicas(), router.images(), List.of("--v=4"), router.drainSeconds())),
                base.roles(),
                base.scaling(),
                base.platform());

        assertThat(container(RouterRenderer.render(withArgs), "epp").getArgs()).endsWith("--v=4");
        assertThat(container(RouterRenderer.render(withArgs), "envoy-proxy").getArgs())
                .doesNotContain("--v=4");
    }
}
