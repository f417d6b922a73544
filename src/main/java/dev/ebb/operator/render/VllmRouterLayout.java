package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.drain.RouterDrain;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * vLLM's production-stack router (vllm-stack-0.1.12), the image its chart runs: the entrypoint is the router itself
 * (docker/Dockerfile, ENTRYPOINT /opt/venv/bin/vllm-router), so only arguments are given.
 *
 * <p>How it lets a replica go (src/vllm_router/service_discovery.py, K8sPodIPServiceDiscovery._watch_engines and
 * _on_engine_update): one watch thread per router Pod over the Pods its label selector matches; an engine is dropped
 * on a DELETED event (which a Pod leaving the selector also produces, so serving=false is seen at once), on a deletion
 * timestamp, or when any of its containers is not ready. The watch is never relisted after it reconnects, so an event
 * missed meanwhile leaves a stale engine behind (production-stack issue #1091): whether it still selects a replica is
 * read from {@code /engines} of every router Pod.
 */
final class VllmRouterLayout implements RouterLayout {
    /**
     * The Pod label the router reads to tell prefill from decode engines (service_discovery.py,
     * K8sPodIPServiceDiscovery._get_model_label, at vllm-stack-0.1.12).
     */
    static final String MODEL_LABEL = "model";
    /**
     * Its values for each half. The router tests membership with Python's {@code in} against the flag's raw string
     * (routers/routing_logic.py, DisaggregatedPrefillOrchestratedRouter._find_endpoints), so neither value may be a
     * substring of the other's flag.
     */
    static final String PREFILL_MODEL = "prefill";

    static final String DECODE_MODEL = "decode";
    /**
     * The user the router runs as. The image sets none and so runs as root (docker/Dockerfile at vllm-stack-0.1.12
     * has no USER); its venv is installed by root with world-readable files, so any unprivileged number can run it,
     * and this one is the conventional "nonroot" of distroless images.
     */
    static final long RUN_AS_USER = 65532;

    /**
     * Its drain is uvicorn's own: the router runs {@code uvicorn.run(app, host, port, log_level, root_path)} with no
     * graceful timeout (app.py at vllm-stack-0.1.12, uvicorn 0.34.0 pinned), so at SIGTERM uvicorn stops listening,
     * closes idle connections, lets every response in progress run to its end with no bound of its own, and only then
     * shuts the app down; the Pod's grace bounds it. Seen with uvicorn 0.34.0 and those arguments: a stream begun
     * before SIGTERM completed, a new connection was refused, the process exited 143 after the stream.
     */
    @Override
    public List<Container> containers(DesiredDeployment deployment, DesiredRouter router) {
        // helm/values.yaml routerSpec.readinessProbe at vllm-stack-0.1.12 probes /health; routers/main_router.py
        // answers 503 there only while its discovery or stats thread is down, never for want of engines
        return List.of(RouterParts.singleProcess(
                router,
                args(deployment),
                servicePorts(),
                "/health",
                RouterAdmin.of(RouterKind.VLLM_ROUTER).port(),
                RouterDrain.of(deployment)));
    }

    /**
     * Flags of src/vllm_router/parsers/parser.py at vllm-stack-0.1.12: discovery of Pods by IP in one namespace
     * (default "default", so it is set) by a label selector, every engine on the one {@code --k8s-port} (admission
     * refuses roles on different ports). A prefill/decode split is served by
     * {@code --routing-logic disaggregated_prefill_orchestrated}, which sends each request to a prefill engine and
     * then a decode engine, told apart by their {@link #MODEL_LABEL} against {@code --prefill-model-labels} and
     * {@code --decode-model-labels}.
     */
    static List<String> args(DesiredDeployment deployment) {
        String selector = RouterRenderer.selects(deployment).entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(","));
        List<String> args = new ArrayList<>(List.of(
                "--host",
                "0.0.0.0",
                "--port",
                Integer.toString(RouterAdmin.of(RouterKind.VLLM_ROUTER).port()),
                "--service-discovery",
                "k8s",
                "--k8s-service-discovery-type",
                "pod-ip",
                "--k8s-namespace",
                deployment.owner().namespace(),
                "--k8s-label-selector",
                selector,
                "--k8s-port",
                Integer.toString(deployment.roles().get(0).port())));
        if (disaggregated(deployment)) {
            args.addAll(List.of(
                    "--routing-logic",
                    "disaggregated_prefill_orchestrated",
                    "--prefill-model-labels",
                    PREFILL_MODEL,
                    "--decode-model-labels",
                    DECODE_MODEL));
        } else {
            args.addAll(List.of("--routing-logic", "roundrobin"));
        }
        return List.copyOf(args);
    }

    static boolean disaggregated(DesiredDeployment deployment) {
        return deployment.roles().stream().anyMatch(role -> role.kind() != RoleKind.Server);
    }

    @Override
    public Map<String, String> memberLabels(MemberSlot slot) {
        return switch (slot.role().kind()) {
            case Prefill -> Map.of(MODEL_LABEL, PREFILL_MODEL);
            case Decode -> Map.of(MODEL_LABEL, DECODE_MODEL);
            case Server -> Map.of();
        };
    }

    @Override
    public Map<String, String> files(DesiredDeployment deployment) {
        return Map.of();
    }

    @Override
    public List<ServicePort> servicePorts() {
        return List.of(RouterParts.servicePort(
                "http", RouterAdmin.of(RouterKind.VLLM_ROUTER).port()));
    }

    /**
     * Python and the libraries the image installs may write temporary files or caches under the user's home; both
     * point at a scratch directory, so the image itself stays read-only.
     */
    @Override
    public List<Volume> volumes() {
        return List.of(RouterParts.scratchVolume());
    }

    @Override
    public PodSecurityContext podSecurity() {
        return new PodSecurityContextBuilder()
                .withRunAsNonRoot(true)
                .withRunAsUser(RUN_AS_USER)
                .build();
    }

    /**
     * Its discovery lists and watches Pods and reads each one it adds (service_discovery.py,
     * _check_engine_sleep_mode). The chart also grants patch, used only by its sleep endpoints to label Pods; the
     * router is given no right to relabel the Pods the operator withdraws.
     */
    @Override
    public List<PolicyRule> rules() {
        return List.of(RouterParts.podReader());
    }
}
