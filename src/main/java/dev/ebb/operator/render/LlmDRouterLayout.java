package dev.ebb.operator.render;

import dev.ebb.operator.BundledScripts;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.FieldError;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.drain.RouterDrain;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Lifecycle;
import io.fabric8.kubernetes.api.model.LifecycleBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * llm-d's router as its v0.10.0 standalone chart runs it (config/charts/llm-d-router-standalone/values.yaml with
 * config/charts/routerlib/templates/_deployment.yaml at v0.10.0): one Pod holding the endpoint picker and, beside it,
 * the Envoy that takes clients' requests, asks the picker over ext_proc on loopback and forwards each request to the
 * endpoint the picker names. The picker discovers the deployment's Pods itself, by label, with no InferencePool.
 */
final class LlmDRouterLayout implements RouterLayout {
    static final String PICKER = "epp";
    static final String PROXY = "envoy-proxy";
    static final String PICKER_CONFIG_FILE = "epp-config.yaml";
    static final String PROXY_CONFIG_FILE = "envoy.yaml";
    /** Envoy's preStop hook, {@code src/main/resources/ebb/drain-envoy.sh}, mounted beside its config. */
    static final String PROXY_DRAIN_FILE = "drain-envoy.sh";

    static final String PROXY_DRAIN_SCRIPT = BundledScripts.load("ebb/" + PROXY_DRAIN_FILE);

    /** The standalone chart's client listener (values.yaml, extraServicePorts "http" and the envoy listener). */
    static final int CLIENT_PORT = 8081;
    /** The picker's ext_proc port: pkg/epp/server/options.go DefaultGrpcPort at v0.10.0. */
    static final int EXT_PROC_PORT = 9002;
    /** The picker's gRPC health port: options.go GRPCHealthPort default at v0.10.0, probed by the chart. */
    static final int HEALTH_PORT = 9003;
    /** Envoy's readiness listener, serving /ready, as the chart's envoy.yaml has it (values.yaml at v0.10.0). */
    static final int PROXY_READY_PORT = 19001;
    /** Envoy's admin interface, loopback only, as the chart's envoy.yaml has it (values.yaml at v0.10.0). */
    static final int PROXY_ADMIN_PORT = 19000;
    /** Where that admin interface listens, in envoy.yaml and for the drain hook alike. */
    static final String PROXY_ADMIN_HOST = "127.0.0.1";
    /**
     * Requests in flight on the client listener, whose stat_prefix is {@code http-<port>}: the connection manager's
     * downstream_rq_active gauge, read from the admin interface's /stats as {@code <name>: <value>} (seen with Envoy
     * 1.36.2, the nearest release served as a wheel; the stat is the same at v1.33.2).
     */
    static final String PROXY_IN_FLIGHT_GAUGE = "http.http-" + CLIENT_PORT + ".downstream_rq_active";
    /**
     * The picker and the routing proxy run as 65532 (Dockerfile.epp and Dockerfile.sidecar at v0.10.0: USER
     * 65532:65532); Envoy's distroless image is built on gcr.io/distroless/base-nossl-debian12:nonroot with no USER of
     * its own (envoy distribution/docker/Dockerfile-envoy, envoy-distroless stage), whose nonroot user is 65532.
     */
    static final long NONROOT_USER = 65532L;

    /**
     * The label the picker's prefill-filter and decode-filter read (pkg/epp/framework/plugins/scheduling/filter/bylabel/
     * roles.go at v0.10.0: RoleLabel, values "prefill" and "decode").
     */
    static final String ROLE_LABEL = "llm-d.ai/role";
    /**
     * The label the picker's core-metrics-extractor reads to pick an engine's metric names; unlabelled Pods are read as
     * vLLM (pkg/epp/framework/plugins/datalayer/extractor/metrics/mapping_registry.go DefaultEngineTypeLabelKey and
     * factories.go defaultEngineName at v0.10.0), so SGLang Pods without it would show no queue; "sglang" is the
     * name of SGLang's built-in metric set there (factories.go defaultEngineConfigs).
     */
    static final String ENGINE_TYPE_LABEL = "llm-d.ai/engine-type";
    /**
     * The ports of a Pod the picker may send to, among its target ports (pkg/epp/datastore/datastore.go
     * activePortsAnnotation and extractActivePorts at v0.10.0); without it every target port counts.
     */
    static final String ACTIVE_PORTS_ANNOTATION = "llm-d.ai/active-ports";
    /** The picker refuses to start with more target ports (pkg/epp/server/options.go Validate at v0.10.0). */
    static final int MAX_TARGET_PORTS = 8;

    /**
     * Every request scored by queue, cache use and prefix, the chart's default-plugins.yaml (config/charts/routerlib/
     * templates/_config.yaml at v0.10.0) without the latency predictor; the picker adds its metrics source, picker and
     * profile handler itself (pkg/epp/config/loader/defaults.go at v0.10.0).
     */
    static final String SERVING_CONFIG = BundledScripts.load("ebb/llm-d/epp-config.yaml");

    /**
     * Prefill and decode picked separately, each among the Pods of its role label, as upstream's own P/D sample
     * (deploy/config/pd-epp-config.yaml at v0.10.0); disagg-profile-handler, prefill-filter, decode-filter and
     * prefix-based-pd-decider are registered under these names in cmd/epp/runner/runner.go at v0.10.0.
     */
    static final String DISAGGREGATED_CONFIG = BundledScripts.load("ebb/llm-d/epp-pd-config.yaml");

    /**
     * The standalone chart's envoy.yaml (values.yaml presets.envoy at v0.10.0) in sidecar mode, with two choices of
     * our own: ext_proc is plaintext, matching the picker's --secure-serving=false (the chart's TLS blocks are emitted
     * only while secure serving is on: routerlib _helpers.tpl llm-d-router.proxy.eppSecureServing); and a request the
     * picker cannot place fails rather than passing through unpicked (failure_mode_allow false, what the chart's
     * helpers give a sidecar when failOpen is unset, though the standalone values set it true), so nothing reaches an
     * endpoint the picker did not choose.
     */
    static final String PROXY_CONFIG = BundledScripts.load("ebb/llm-d/envoy.yaml")
            .formatted(CLIENT_PORT, PROXY_ADMIN_PORT, PROXY_READY_PORT, EXT_PROC_PORT, PROXY_ADMIN_HOST);

    @Override
    public List<Container> containers(DesiredDeployment deployment, DesiredRouter router) {
        List<String> args = new ArrayList<>(pickerArgs(deployment));
        args.addAll(router.extraArgs());
        Container picker = new ContainerBuilder()
                .withName(PICKER)
                .withImage(router.images().router())
                // the image's ENTRYPOINT is /app/epp (Dockerfile.epp at v0.10.0): flags only
                .withArgs(args)
                .withEnv(pickerEnv())
                .withPorts(
                        port("grpc", EXT_PROC_PORT), port("grpc-health", HEALTH_PORT), port("metrics", metricsPort()))
                .withSecurityContext(RouterParts.locked())
                // with leader election off any service name reports the picker's own health (cmd/epp/runner/health.go)
                .withReadinessProbe(new ProbeBuilder()
                        .withNewGrpc()
                        .withPort(HEALTH_PORT)
                        .withService("inference-extension")
                        .endGrpc()
                        .withPeriodSeconds(2)
                        .build())
                .withLivenessProbe(new ProbeBuilder()
                        .withNewGrpc()
                        .withPort(HEALTH_PORT)
                        .withService("inference-extension")
                        .endGrpc()
                        .withInitialDelaySeconds(5)
                        .withPeriodSeconds(10)
                        .build())
                .addNewVolumeMount()
                .withName("config")
                .withMountPath(CONFIG_DIR)
                .withReadOnly(true)
                .endVolumeMount()
                .build();
        Container proxy = new ContainerBuilder()
                .withName(PROXY)
                .withImage(router.images().dataPlane())
                // envoy itself, past the Ubuntu image's entrypoint script; the chart's flags, its config read from our
                // files
                .withCommand(PROXY_BINARY)
                .withArgs(
                        "--service-node",
                        PROXY,
                        "--log-level",
                        "warn",
                        "--cpuset-threads",
                        "--drain-strategy",
                        "immediate",
                        "--drain-time-s",
                        "60",
                        "-c",
                        CONFIG_DIR + "/" + PROXY_CONFIG_FILE)
                .withLifecycle(proxyDrain(RouterDrain.of(deployment)))
                .withPorts(port("http", CLIENT_PORT), port("proxy-ready", PROXY_READY_PORT))
                .withSecurityContext(RouterParts.locked())
                .withReadinessProbe(new ProbeBuilder()
                        .withNewHttpGet()
                        .withPath("/ready")
                        .withPort(new IntOrString(PROXY_READY_PORT))
                        .withScheme("HTTP")
                        .endHttpGet()
                        .withPeriodSeconds(5)
                        .withTimeoutSeconds(1)
                        .withFailureThreshold(1)
                        .build())
                .addNewVolumeMount()
                .withName("config")
                .withMountPath(CONFIG_DIR)
                .withReadOnly(true)
                .endVolumeMount()
                .build();
        return List.of(picker, proxy);
    }

    /** Where both of Envoy's images keep the binary (ci/Dockerfile-envoy at v1.33.2). */
    static final String PROXY_BINARY = "/usr/local/bin/envoy";

    /**
     * Envoy exits at once on SIGTERM and cuts every stream it carries (source/server/server.cc at v1.33.2; seen with
     * 1.36.2: exit 3 ms after SIGTERM, the stream cut), and it has no drain of its own on a signal. Its preStop hook
     * therefore fails its health check first, which also makes every later response close its connection
     * (source/server/drain_manager_impl.cc, drainClose, at v1.33.2), lets it serve through the settle, then waits for
     * its client listener's requests in flight to reach 0, within the drain; see the script.
     */
    static Lifecycle proxyDrain(RouterDrain drain) {
        return new LifecycleBuilder()
                .withNewPreStop()
                .withNewExec()
                .withCommand(
                        "/bin/bash",
                        CONFIG_DIR + "/" + PROXY_DRAIN_FILE,
                        Integer.toString(drain.settle()),
                        Integer.toString(drain.drain()),
                        PROXY_ADMIN_HOST,
                        Integer.toString(PROXY_ADMIN_PORT),
                        PROXY_IN_FLIGHT_GAUGE)
                .endExec()
                .endPreStop()
                .build();
    }

    /**
     * The picker's flags as pkg/epp/server/options.go defines them at v0.10.0: standalone discovery by
     * --endpoint-selector and --endpoint-target-ports (no InferencePool, so no CRD watches); --secure-serving=false
     * since it defaults to true and Envoy reaches it in plaintext over loopback; --metrics-endpoint-auth=false since it
     * defaults to true and the operator reads the metrics without a token; --health-checking=true so that the
     * ExternalProcessor health Envoy's ext_proc cluster checks is served on the ext_proc port
     * (pkg/epp/server/runserver.go); --tracing=false as the chart passes it, there being no collector. No
     * --ha-enable-leader-election, which the chart adds past one replica: each replica then routes on its own
     * (active-active, the chart README's other mode), so every ready replica the operator asks is one that routes.
     * --drain-timeout (default 30 s) is how long the picker, once it has SIGTERM, goes on taking new ext_proc streams
     * before gRPC's GracefulStop waits for those open (cmd/epp/runner/runner.go at v0.10.0); its Envoy sends it streams
     * until the Envoy's own drain ends, so the picker is given that long: it outlives the Envoy that asks it.
     */
    static List<String> pickerArgs(DesiredDeployment deployment) {
        String selector = RouterRenderer.selects(deployment).entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(","));
        String ports = targetPorts(deployment).stream().map(String::valueOf).collect(Collectors.joining(","));
        return List.of(
                "--endpoint-selector=" + selector,
                "--endpoint-target-ports=" + ports,
                "--config-file=" + CONFIG_DIR + "/" + PICKER_CONFIG_FILE,
                "--grpc-port=" + EXT_PROC_PORT,
                "--grpc-health-port=" + HEALTH_PORT,
                "--metrics-port=" + metricsPort(),
                "--metrics-endpoint-auth=false",
                "--secure-serving=false",
                "--health-checking=true",
                "--tracing=false",
                "--drain-timeout=" + RouterDrain.of(deployment).lastStreamBy() + "s");
    }

    /**
     * The picker exits without POD_NAME in standalone mode and, without NAMESPACE, watches the namespace "default"
     * (cmd/epp/runner/runner.go extractGKNN and resolvePoolNamespace at v0.10.0); the chart sets both from the
     * downward API.
     */
    private static List<EnvVar> pickerEnv() {
        return List.of(
                new EnvVarBuilder()
                        .withName("NAMESPACE")
                        .withNewValueFrom()
                        .withNewFieldRef()
                        .withFieldPath("metadata.namespace")
                        .endFieldRef()
                        .endValueFrom()
                        .build(),
                new EnvVarBuilder()
                        .withName("POD_NAME")
                        .withNewValueFrom()
                        .withNewFieldRef()
                        .withFieldPath("metadata.name")
                        .endFieldRef()
                        .endValueFrom()
                        .build());
    }

    /**
     * Each role's own port, once: decode Pods behind the routing proxy are reached at the proxy, on the role's port,
     * which also passes the picker's metrics scrapes through to the engine (pkg/sidecar/proxy/proxy.go at v0.10.0
     * routes every other path to the model server).
     */
    static List<Integer> targetPorts(DesiredDeployment deployment) {
        return deployment.roles().stream().map(DesiredRole::port).distinct().toList();
    }

    /**
     * Why llm-d's router could not serve this deployment, if it could not: the picker takes at most
     * {@value #MAX_TARGET_PORTS} target ports and exits at start with more; and an engine serving TLS is
     * reached by neither Envoy's original-destination cluster, which has no TLS socket, nor the picker's metrics
     * source, whose scheme defaults to http (pkg/epp/framework/plugins/datalayer/source/metrics/datasource.go at
     * v0.10.0). Pure, for admission to refuse such a spec rather than render Pods that cannot be served.
     */
    @Override
    public List<FieldError> unservable(DesiredDeployment deployment) {
        List<FieldError> errors = new ArrayList<>();
        int ports = targetPorts(deployment).size();
        if (ports > MAX_TARGET_PORTS) {
            errors.add(new FieldError(
                    "spec.roles",
                    "llm-d-router's endpoint picker takes at most " + MAX_TARGET_PORTS
                            + " distinct role ports, the roles use " + ports));
        }
        List<String> tlsFlags = EngineProfile.of(deployment.engine()).tlsFlags();
        for (int i = 0; i < deployment.roles().size(); i++) {
            DesiredRole role = deployment.roles().get(i);
            if (Stream.concat(role.extraArgs().stream(), role.command().stream())
                    .anyMatch(arg ->
                            tlsFlags.stream().anyMatch(flag -> arg.equals(flag) || arg.startsWith(flag + "=")))) {
                errors.add(new FieldError(
                        "spec.roles[" + i + "].extraArgs",
                        "serve TLS, which llm-d-router's Envoy and endpoint picker do not speak to engines"));
            }
        }
        return List.copyOf(errors);
    }

    /** Whether the deployment splits prefill from decode, which the picker then schedules in two profiles. */
    static boolean disaggregates(DesiredDeployment deployment) {
        return deployment.roles().stream().anyMatch(r -> r.kind() == RoleKind.Prefill)
                && deployment.roles().stream().anyMatch(r -> r.kind() == RoleKind.Decode);
    }

    @Override
    public Map<String, String> files(DesiredDeployment deployment) {
        return Map.of(
                PICKER_CONFIG_FILE,
                disaggregates(deployment) ? DISAGGREGATED_CONFIG : SERVING_CONFIG,
                PROXY_CONFIG_FILE,
                PROXY_CONFIG,
                PROXY_DRAIN_FILE,
                PROXY_DRAIN_SCRIPT);
    }

    /**
     * Clients on the proxy's listener first, the one status.router.address names; then the picker's metrics, which
     * the chart's Service exposes too. The picker's ext_proc port stays inside the Pod: only its own Envoy talks to it.
     */
    @Override
    public List<ServicePort> servicePorts() {
        return List.of(RouterParts.servicePort("http", CLIENT_PORT), RouterParts.servicePort("metrics", metricsPort()));
    }

    /** Both images run as a numbered non-root user; naming it lets the kubelet check runAsNonRoot. */
    @Override
    public PodSecurityContext podSecurity() {
        return new PodSecurityContextBuilder()
                .withRunAsNonRoot(true)
                .withRunAsUser(NONROOT_USER)
                .withRunAsGroup(NONROOT_USER)
                .build();
    }

    /**
     * Pods, read-only, in the deployment's namespace: the chart's Role for the picker (routerlib _rbac.yaml at
     * v0.10.0). Standalone mode starts no InferencePool or objective watches, and with metrics auth off the picker
     * makes no token reviews.
     */
    @Override
    public List<PolicyRule> rules() {
        return List.of(RouterParts.podReader());
    }

    @Override
    public Map<String, String> memberLabels(MemberSlot slot) {
        Map<String, String> labels = new LinkedHashMap<>();
        if (slot.role().kind() == RoleKind.Prefill) {
            labels.put(ROLE_LABEL, "prefill");
        } else if (slot.role().kind() == RoleKind.Decode) {
            labels.put(ROLE_LABEL, "decode");
        }
        if (slot.deployment().engine() == Engine.SGLANG) {
            labels.put(ENGINE_TYPE_LABEL, "sglang");
        }
        return labels;
    }

    /**
     * When roles listen on different ports, each Pod names its own, so that the picker never sends to a port the Pod
     * does not serve; with one port for all, Pods stay as they were.
     */
    @Override
    public Map<String, String> memberAnnotations(MemberSlot slot) {
        return targetPorts(slot.deployment()).size() > 1
                ? Map.of(ACTIVE_PORTS_ANNOTATION, Integer.toString(slot.role().port()))
                : Map.of();
    }

    private static int metricsPort() {
        return RouterAdmin.of(RouterKind.LLM_D_ROUTER).port();
    }

    private static ContainerPort port(String name, int number) {
        return new ContainerPortBuilder()
                .withName(name)
                .withContainerPort(number)
                .withProtocol("TCP")
                .build();
    }
}
