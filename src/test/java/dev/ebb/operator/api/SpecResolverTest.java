package dev.ebb.operator.api;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.NodeMaintenance;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SpecResolverTest {
    /** What the CRD's rule refuses and what the operator refuses are the same arguments. */
    @Test
    void theAdmissionRuleAndTheResolverAgreeOnWhatTurnsTheGaugesOff() {
        List<String> spellings = java.util.Arrays.stream(RoleSpec.GAUGES_OFF_SPELLINGS
                        .replaceAll("[\\[\\]' ]", "")
                        .split(","))
                .toList();

        assertThat(spellings).hasSize(20).allMatch(SpecResolver::turnsGaugesOff);
        assertThat(List.of(
                        "--disable-log-",
                        "--disable-log-requests",
                        "--disable-log-statsx",
                        "--disable-log-stats=true",
                        "disable-log-stats",
                        "--enable-log-stats",
                        "-disable-log-stats",
                        "--disable-log"))
                .noneMatch(SpecResolver::turnsGaugesOff);
        assertThat(SpecResolver.turnsGaugesOff(null)).isFalse();
    }

    @Test
    void fillsEveryDefaultWhenTheRoleSetsNothing() {
        DesiredDeployment desired =
                deployment("qwen", "vLLM").role(role("server")).desired();

        assertThat(desired.engine()).isEqualTo(Engine.VLLM);
        assertThat(desired.router()).isEmpty();
        DesiredRole server = desired.roles().get(0);
        assertThat(server.kind()).isEqualTo(RoleKind.Server);
        assertThat(server.replicas()).isEqualTo(1);
        assertThat(server.size()).isEqualTo(1);
        assertThat(server.port()).isEqualTo(8000);
        assertThat(server.grace()).isEmpty();
        assertThat(server.image()).isEqualTo("default/vLLM:test");
        assertThat(server.takeOver()).isFalse();
        assertThat(server.drainBudget()).hasSeconds(240);
        assertThat(server.maxSurge()).isZero();
        assertThat(server.maxUnavailable()).isEqualTo(1);
        assertThat(server.nodeMaintenance()).isEqualTo(NodeMaintenance.Protocol);
    }

    @Test
    void roleImageWinsOverEngineImageWhichWinsOverTheDefault() {
        DesiredDeployment desired = deployment("qwen", "SGLang")
                .engineImage("engine:1")
                .role(role("a").image("role:2"))
                .role(role("b"))
                .desired();

        assertThat(desired.roles()).extracting(DesiredRole::image).containsExactly("role:2", "engine:1");
    }

    @Test
    void aRoleMayNotTakeTheRoutersName() {
        Resolution resolution = Specs.RESOLVER.resolve(
                deployment("qwen", "vLLM").role(role("router")).build());

        assertThat(resolution)
                .isInstanceOfSatisfying(
                        Resolution.Rejected.class,
                        r -> assertThat(r.summary())
                                .contains("spec.roles[0].name")
                                .contains("'router'"));
    }

    @Test
    void routerThatFitsTheEngineIsAccepted() {
        assertThat(deployment("qwen", "SGLang")
                        .router("sglang-gateway")
                        .role(role("s"))
                        .desired()
                        .router())
                .contains(new DesiredRouter(
                        RouterKind.SGLANG_GATEWAY,
                        1,
                        new RouterImages(
                                "default/sglang-gateway:test",
                                "default/router-proxy:test",
                                "default/routing-proxy:test"),
                        List.of(),
                        Optional.empty()));
        assertThat(deployment("qwen", "vLLM")
                        .router("llm-d-router")
                        .role(role("s"))
                        .desired()
                        .router()
                        .map(DesiredRouter::kind))
                .contains(RouterKind.LLM_D_ROUTER);
    }

    @Test
    void theFirstRoleIsScaledUnlessAnotherIsNamed() {
        DesiredDeployment first = deployment("qwen", "vLLM")
                .role(role("a").replicas(2))
                .role(role("b"))
                .desired();
        DesiredDeployment named = deployment("qwen", "vLLM")
                .scaling("b")
                .role(role("a").replicas(2))
                .role(role("b"))
                .desired();

        assertThat(first.scaling().role()).isEqualTo("a");
        assertThat(named.scaling().role()).isEqualTo("b");
        assertThat(named.scaling().override()).isEmpty();
    }

    @Test
    void scalingReplicasDecideTheScaledRolesCountAndSaySo() {
        DesiredDeployment desired = deployment("qwen", "SGLang")
                .scaling("decode", 1)
                .role(role("prefill").kind("Prefill").replicas(2))
                .role(role("decode").kind("Decode").replicas(3))
                .desired();

        assertThat(desired.roles())
                .extracting(r -> r.name() + "=" + r.replicas())
                .containsExactly("prefill=2", "decode=1");
        assertThat(desired.scaling().override())
                .hasValueSatisfying(
                        message -> assertThat(message)
                                .startsWith(
                                        "spec.scaling.replicas (1) takes precedence over spec.roles[1].replicas (3) of role decode"));
    }

    @Test
    void scalingReplicasThatAgreeWithTheRoleOverrideNothing() {
        DesiredDeployment agreeing = deployment("qwen", "vLLM")
                .scaling("s", 2)
                .role(role("s").replicas(2))
                .desired();
        DesiredDeployment unsetRole =
                deployment("qwen", "vLLM").scaling("s", 1).role(role("s")).desired();
        DesiredDeployment overUnset =
                deployment("qwen", "vLLM").scaling("s", 0).role(role("s")).desired();

        assertThat(agreeing.scaling().override()).isEmpty();
        assertThat(unsetRole.scaling().override()).isEmpty();
        assertThat(overUnset.roles().get(0).replicas()).isZero();
        assertThat(overUnset.scaling().override())
                .as("a role that sets no replicas asks for none")
                .isEmpty();
    }

    static Stream<Arguments> routedShapesThatFit() {
        return Stream.of(
                Arguments.of(
                        "vllm-router, one Server role on its own port",
                        deployment("qwen", "vLLM")
                                .router("vllm-router")
                                .role(role("s").port(9000))),
                Arguments.of(
                        "vllm-router, a split on one port",
                        deployment("qwen", "vLLM")
                                .scaling("p")
                                .router("vllm-router")
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode"))),
                Arguments.of(
                        "sglang-gateway, two Server roles on one port",
                        deployment("qwen", "SGLang")
                                .router("sglang-gateway")
                                .role(role("a").port(30001))
                                .role(role("b").port(30001))),
                Arguments.of(
                        "sglang-gateway, a split with two decode roles",
                        deployment("qwen", "SGLang")
                                .scaling("p")
                                .router("sglang-gateway")
                                .role(role("p").kind("Prefill"))
                                .role(role("d1").kind("Decode"))
                                .role(role("d2").kind("Decode"))),
                Arguments.of(
                        "no router, roles on two ports and a lone prefill role",
                        deployment("qwen", "SGLang")
                                .scaling("p")
                                .role(role("p").kind("Prefill"))
                                .role(role("s").port(9000))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routedShapesThatFit")
    void rolesARouterCanReachAreAccepted(String title, Specs.Deployment fits) {
        assertThat(Specs.RESOLVER.resolve(fits.build())).isInstanceOf(Resolution.Accepted.class);
    }

    static Stream<Arguments> badResources() {
        return Stream.of(
                Arguments.of(
                        "unknown engine",
                        deployment("qwen", "TGI").role(role("s")),
                        "spec.engine.name",
                        "unsupported value \"TGI\""),
                Arguments.of(
                        "missing engine", deployment("qwen", null).role(role("s")), "spec.engine.name", "required"),
                Arguments.of(
                        "engine name with different case",
                        deployment("qwen", "vllm").role(role("s")),
                        "spec.engine.name",
                        "vLLM, SGLang"),
                Arguments.of(
                        "vllm-router on SGLang",
                        deployment("qwen", "SGLang").router("vllm-router").role(role("s")),
                        "spec.router.name",
                        "does not serve engine SGLang"),
                Arguments.of(
                        "sglang-gateway on vLLM",
                        deployment("qwen", "vLLM").router("sglang-gateway").role(role("s")),
                        "spec.router.name",
                        "does not serve engine vLLM"),
                Arguments.of(
                        "unknown router",
                        deployment("qwen", "vLLM").router("nginx").role(role("s")),
                        "spec.router.name",
                        "unsupported"),
                Arguments.of("no roles", deployment("qwen", "vLLM"), "spec.roles", "at least one"),
                Arguments.of(
                        "duplicate role names",
                        deployment("qwen", "vLLM").role(role("s")).role(role("s")),
                        "spec.roles[1].name",
                        "duplicate"),
                Arguments.of(
                        "grace below 15",
                        deployment("qwen", "vLLM").role(role("s").grace(14)),
                        "spec.roles[0].terminationGracePeriodSeconds",
                        "between 15 and 3600, got 14"),
                Arguments.of(
                        "grace above 3600",
                        deployment("qwen", "vLLM").role(role("s").grace(3601)),
                        "spec.roles[0].terminationGracePeriodSeconds",
                        "got 3601"),
                Arguments.of(
                        "drain budget below 30",
                        deployment("qwen", "vLLM").role(role("s").drainSeconds(29)),
                        "spec.roles[0].retirement.drainSeconds",
                        "between 30 and 86400, got 29"),
                Arguments.of(
                        "drain budget above a day",
                        deployment("qwen", "vLLM").role(role("s").drainSeconds(86401)),
                        "spec.roles[0].retirement.drainSeconds",
                        "got 86401"),
                Arguments.of(
                        "node maintenance of another name",
                        deployment("qwen", "vLLM").role(role("s").disruption(null, "drain")),
                        "spec.roles[0].disruption.nodeMaintenance",
                        "\"drain\""),
                Arguments.of(
                        "a negative disruption budget",
                        deployment("qwen", "vLLM").role(role("s").disruption(-1, "Evict")),
                        "spec.roles[0].disruption.maxUnavailable",
                        "got -1"),
                Arguments.of(
                        "router drain below 30",
                        deployment("qwen", "vLLM")
                                .router("vllm-router")
                                .routerDrainSeconds(29)
                                .role(role("s")),
                        "spec.router.drainSeconds",
                        "between 30 and 86400, got 29"),
                Arguments.of(
                        "router drain negative",
                        deployment("qwen", "vLLM")
                                .router("vllm-router")
                                .routerDrainSeconds(-5)
                                .role(role("s")),
                        "spec.router.drainSeconds",
                        "got -5"),
                Arguments.of(
                        "router drain above a day",
                        deployment("qwen", "vLLM")
                                .router("vllm-router")
                                .routerDrainSeconds(86401)
                                .role(role("s")),
                        "spec.router.drainSeconds",
                        "got 86401"),
                Arguments.of(
                        "--port in extraArgs",
                        deployment("qwen", "vLLM").role(role("s").extraArgs("--port", "9000")),
                        "spec.roles[0].extraArgs",
                        "must not set --port: the engine listens on spec.roles[0].port"),
                Arguments.of(
                        "--port=N in extraArgs",
                        deployment("qwen", "SGLang").role(role("s").extraArgs("--tp", "2", "--port=9000")),
                        "spec.roles[0].extraArgs",
                        "must not set --port"),
                Arguments.of(
                        "--host in extraArgs",
                        deployment("qwen", "vLLM").role(role("s").extraArgs("--host=10.0.0.7")),
                        "spec.roles[0].extraArgs",
                        "must not set --host"),
                Arguments.of(
                        "--uds=PATH in extraArgs",
                        deployment("qwen", "vLLM").role(role("s").extraArgs("--uds=/tmp/vllm.sock")),
                        "spec.roles[0].extraArgs",
                        "must not set --uds: the engine would serve a Unix socket instead of spec.roles[0].port"),
                Arguments.of(
                        "--disable-log-stats in extraArgs",
                        deployment("qwen", "vLLM").role(role("s").extraArgs("--disable-log-stats")),
                        "spec.roles[0].extraArgs",
                        "must not set --disable-log-stats: vLLM then publishes no vllm:num_requests_running"),
                Arguments.of(
                        "--disable-log-stats with underscores",
                        deployment("qwen", "vLLM").role(role("s").extraArgs("--disable_log_stats")),
                        "spec.roles[0].extraArgs",
                        "must not set --disable-log-stats"),
                Arguments.of(
                        "--disable-log-stats abbreviated",
                        deployment("qwen", "vLLM").role(role("s").extraArgs("--enforce-eager", "--disable-log-st")),
                        "spec.roles[0].extraArgs",
                        "must not set --disable-log-stats"),
                Arguments.of(
                        "a multi-Pod vLLM role on a release without multi-node flags",
                        deployment("qwen", "vLLM").role(role("s").size(2).image("vllm/vllm-openai:v0.11.0")),
                        "spec.roles[0].image",
                        "names vLLM v0.11.0, which has no --nnodes, --node-rank, --master-addr or --master-port"),
                Arguments.of(
                        "a multi-Pod vLLM role on an engine image without multi-node flags",
                        deployment("qwen", "vLLM")
                                .engineImage("vllm/vllm-openai:v0.10.2")
                                .role(role("s").size(4)),
                        "spec.engine.image",
                        "use vLLM v0.11.1 or later"),
                Arguments.of(
                        "a Decode role behind llm-d-router on the proxied engine's port",
                        deployment("qwen", "vLLM")
                                .router("llm-d-router")
                                .scaling("p")
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode").port(8200)),
                        "spec.roles[1].port",
                        "cannot be 8200: this Decode role's engine listens there"),
                Arguments.of(
                        "a multi-Pod vLLM role on the rendezvous port",
                        deployment("qwen", "vLLM").role(role("s").size(2).port(29500)),
                        "spec.roles[0].port",
                        "cannot be 29500: a multi-Pod vLLM replica's leader holds its rendezvous port there"),
                Arguments.of(
                        "a multi-Pod SGLang role on the rendezvous port",
                        deployment("qwen", "SGLang").role(role("s").size(2).port(5000)),
                        "spec.roles[0].port",
                        "cannot be 5000"),
                Arguments.of(
                        "a surge of 2",
                        deployment("qwen", "vLLM").role(role("s").maxSurge(2)),
                        "spec.roles[0].rollout.maxSurge",
                        "between 0 and 1, got 2"),
                Arguments.of(
                        "size 0",
                        deployment("qwen", "vLLM").role(role("s").size(0)),
                        "spec.roles[0].size",
                        "between 1 and 64"),
                Arguments.of(
                        "size 65",
                        deployment("qwen", "vLLM").role(role("s").size(65)),
                        "spec.roles[0].size",
                        "between 1 and 64"),
                Arguments.of(
                        "negative replicas",
                        deployment("qwen", "vLLM").role(role("s").replicas(-1)),
                        "spec.roles[0].replicas",
                        "between 0 and 1024"),
                Arguments.of(
                        "1025 replicas",
                        deployment("qwen", "vLLM").role(role("s").replicas(1025)),
                        "spec.roles[0].replicas",
                        "got 1025"),
                Arguments.of(
                        "port 0",
                        deployment("qwen", "vLLM").role(role("s").port(0)),
                        "spec.roles[0].port",
                        "between 1 and 65535"),
                Arguments.of(
                        "unknown role kind",
                        deployment("qwen", "vLLM").role(role("s").kind("Encode")),
                        "spec.roles[0].kind",
                        "unsupported value \"Encode\""),
                Arguments.of(
                        "role name not a DNS label",
                        deployment("qwen", "vLLM").role(role("Server_1")),
                        "spec.roles[0].name",
                        "DNS label"),
                Arguments.of(
                        "role name too long",
                        deployment("qwen", "vLLM").role(role("r".repeat(21))),
                        "spec.roles[0].name",
                        "longer than 20"),
                Arguments.of(
                        "role name shaped like a replica Service",
                        deployment("qwen", "vLLM").role(role("server-r0")),
                        "spec.roles[0].name",
                        "-r<digits>"),
                Arguments.of(
                        "names too long together",
                        deployment("m".repeat(40), "vLLM").role(role("r".repeat(13))),
                        "spec.roles[0].name",
                        "together with metadata.name"),
                Arguments.of(
                        "deployment name not a DNS label",
                        deployment("Qwen.3", "vLLM").role(role("s")),
                        "metadata.name",
                        "DNS label"),
                Arguments.of(
                        "missing model name",
                        deployment("qwen", "vLLM").model(null).role(role("s")),
                        "spec.model.name",
                        "required"),
                Arguments.of(
                        "oversized model name",
                        deployment("qwen", "vLLM").model("x".repeat(257)).role(role("s")),
                        "spec.model.name",
                        "longer than 256"),
                Arguments.of(
                        "too many extra args",
                        deployment("qwen", "vLLM").role(role("s").extraArgs(Collections.nCopies(257, "--x"))),
                        "spec.roles[0].extraArgs",
                        "at most 256"),
                Arguments.of(
                        "extra args on a take-over role",
                        deployment("qwen", "vLLM")
                                .role(role("s").command("/bin/engine").extraArgs(List.of("--x"))),
                        "spec.roles[0].extraArgs",
                        "cannot be combined with spec.roles[].command"),
                Arguments.of("eleven roles", elevenRoles(), "spec.roles", "at most 10"),
                Arguments.of(
                        "a Prefill/Decode split that names no role to scale",
                        deployment("qwen", "vLLM")
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")),
                        "spec.scaling.role",
                        "required when a role is Prefill or Decode"),
                Arguments.of(
                        "a scaled role that is not a role",
                        deployment("qwen", "vLLM").scaling("decode").role(role("s")),
                        "spec.scaling.role",
                        "must name one of spec.roles[].name; got \"decode\""),
                Arguments.of(
                        "negative scaled replicas",
                        deployment("qwen", "vLLM").scaling("s", -1).role(role("s")),
                        "spec.scaling.replicas",
                        "between 0 and 1024, got -1"),
                Arguments.of(
                        "vllm-router in front of roles on two ports",
                        deployment("qwen", "vLLM")
                                .router("vllm-router")
                                .role(role("a"))
                                .role(role("b").port(9000)),
                        "spec.roles[1].port",
                        "reaches every role on one port (--k8s-port), that of spec.roles[0], 8000; got 9000"),
                Arguments.of(
                        "sglang-gateway in front of roles on two ports",
                        deployment("qwen", "SGLang")
                                .router("sglang-gateway")
                                .role(role("a").port(30001))
                                .role(role("b")),
                        "spec.roles[1].port",
                        "(--service-discovery-port), that of spec.roles[0], 30001; got 8000"),
                Arguments.of(
                        "vllm-router with a Server role beside a split",
                        deployment("qwen", "vLLM")
                                .scaling("p")
                                .router("vllm-router")
                                .role(role("s"))
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")),
                        "spec.roles[0].kind",
                        "either Server roles or a Prefill/Decode split, not both"),
                Arguments.of(
                        "sglang-gateway with an explicit Server role beside a split",
                        deployment("qwen", "SGLang")
                                .scaling("p")
                                .router("sglang-gateway")
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode"))
                                .role(role("s").kind("Server")),
                        "spec.roles[2].kind",
                        "not both"),
                Arguments.of(
                        "sglang-gateway with prefill and no decode",
                        deployment("qwen", "SGLang")
                                .scaling("p")
                                .router("sglang-gateway")
                                .role(role("p").kind("Prefill")),
                        "spec.roles",
                        "needs a Decode role"),
                Arguments.of(
                        "vllm-router with decode and no prefill",
                        deployment("qwen", "vLLM")
                                .scaling("d")
                                .router("vllm-router")
                                .role(role("d").kind("Decode")),
                        "spec.roles",
                        "needs a Prefill role"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badResources")
    void badResourceIsRejectedNamingTheField(String title, Specs.Deployment bad, String field, String message) {
        Resolution resolution = Specs.RESOLVER.resolve(bad.build());

        assertThat(resolution).isInstanceOf(Resolution.Rejected.class);
        assertThat(((Resolution.Rejected) resolution).errors()).anySatisfy(error -> {
            assertThat(error.field()).isEqualTo(field);
            assertThat(error.message()).contains(message);
        });
    }

    @Test
    void everyErrorIsReportedAtOnceSoTheUserFixesThemTogether() {
        Resolution resolution = Specs.RESOLVER.resolve(
                deployment("qwen", "TGI").role(role("s").size(0).grace(5)).build());

        assertThat(((Resolution.Rejected) resolution).errors())
                .extracting(FieldError::field)
                .contains("spec.engine.name", "spec.roles[0].size", "spec.roles[0].terminationGracePeriodSeconds");
    }

    @Test
    void hostileValueIsQuotedAndBoundedInTheMessage() {
        String hostile = "vLLM\"; rm -rf / #\n" + "x".repeat(5000);
        Resolution.Rejected rejected = (Resolution.Rejected) Specs.RESOLVER.resolve(
                deployment("qwen", hostile).role(role("s")).build());

        String summary = rejected.summary();
        assertThat(summary).doesNotContain("\n").contains("\\\"; rm -rf / #\\n");
        assertThat(summary.length()).isLessThan(300);
    }

    @Test
    void missingSpecIsRejectedNotThrown() {
        ModelDeployment md = deployment("qwen", "vLLM").build();
        md.setSpec(null);

        assertThat(((Resolution.Rejected) Specs.RESOLVER.resolve(md)).errors())
                .extracting(FieldError::field)
                .containsExactly("spec");
    }

    @Test
    void nullRoleAndNullArgumentAreRejected() {
        Specs.Deployment withNullRole = deployment("qwen", "vLLM").roles(Collections.singletonList(null));
        assertThat(((Resolution.Rejected) Specs.RESOLVER.resolve(withNullRole.build())).errors())
                .extracting(FieldError::field)
                .containsExactly("spec.roles[0]");

        Specs.Deployment withNullArg =
                deployment("qwen", "vLLM").role(role("s").extraArgs(Collections.singletonList(null)));
        assertThat(((Resolution.Rejected) Specs.RESOLVER.resolve(withNullArg.build())).errors())
                .extracting(FieldError::field)
                .containsExactly("spec.roles[0].extraArgs");
    }

    @Test
    void aSharedMemorySizeTheOperatorCannotReadIsRefusedNamingTheField() {
        for (String size : List.of("lots", "-1Gi", "1Gi; rm -rf /", "9".repeat(400), "1e999999999", "", "8GiB")) {
            Resolution resolution = Specs.RESOLVER.resolve(deployment("qwen", "vLLM")
                    .role(role("s").sharedMemory(size))
                    .build());

            assertThat(resolution).as(size).isInstanceOf(Resolution.Rejected.class);
            assertThat(((Resolution.Rejected) resolution).errors())
                    .as(size)
                    .extracting(FieldError::field)
                    .containsExactly("spec.roles[0].sharedMemory");
        }
    }

    @Test
    void aReplicasParallelDegreeIsReadAsItsEngineReadsIt() {
        record Case(List<String> args, int degree) {}
        for (Case c : List.of(
                new Case(List.of(), 1),
                new Case(List.of("--tensor-parallel-size", "4"), 4),
                new Case(List.of("--tensor-parallel-size=2", "--pipeline-parallel-size", "2"), 4),
                new Case(List.of("-tp", "8", "-dp", "2"), 16),
                new Case(List.of("--tp-size", "2", "--dp", "2"), 4),
                new Case(List.of("--tp"), 1),
                new Case(List.of("--tp", "-1"), 1),
                new Case(List.of("--tp", "x"), 1),
                new Case(List.of("-tp", "99999999999", "-pp", "99999", "-dp", "99999"), 65_536),
                new Case(List.of("--tensor-parallel-sizes", "4"), 1))) {
            assertThat(ParallelDegree.of(c.args())).as(c.args().toString()).isEqualTo(c.degree());
        }
    }

    @Test
    void namesExactlyAtTheLimitAreAccepted() {
        DesiredDeployment desired =
                deployment("m".repeat(32), "vLLM").role(role("r".repeat(20))).desired();

        assertThat(desired.roles()).hasSize(1);
    }

    private static Specs.Deployment elevenRoles() {
        Specs.Deployment d = deployment("qwen", "vLLM");
        List.of("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k").forEach(n -> d.role(role(n)));
        return d;
    }
}
