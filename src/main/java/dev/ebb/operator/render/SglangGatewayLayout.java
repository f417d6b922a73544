package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.api.Labels;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * SGLang's model gateway (smg v1.9.0). Its image's entrypoint is the launcher, {@code python3 -m smg.launch_router}
 * (docker/Dockerfile), so only arguments are given and the command is left alone.
 *
 * <p>How it lets a replica go (model_gateway/src/service_discovery.rs): its watch, filtered by its selector, hands on
 * only applied objects (kube-runtime's applied_objects skips the DELETED event a Pod leaving the selector produces;
 * smg pins kube 3.0.1 in model_gateway/Cargo.toml), and drops a worker when such a Pod carries a deletion timestamp; a
 * Pod that turns NotReady is never dropped (handle_pod_event adds healthy Pods and removes nothing); a Pod whose label
 * no longer matches (serving=false) is dropped only by the full relist, reconcile_pods, it runs every 60 s (the
 * interval bindings/python/src/lib.rs sets). So the operator removes the worker itself through the gateway's
 * worker API once the Pod is withdrawn.
 */
final class SglangGatewayLayout implements RouterLayout {
    /**
     * The annotation the gateway reads a prefill Pod's bootstrap port from (bindings/python/src/smg/router_args.py
     * sets it; service_discovery.rs PodInfo::from_pod reads it, at v1.9.0).
     */
    static final String BOOTSTRAP_PORT_ANNOTATION = "sglang.ai/bootstrap-port";
    /** The SGLang flag that moves a prefill server's bootstrap port, and its default (server_args.py). */
    static final String BOOTSTRAP_PORT_FLAG = "--disaggregation-bootstrap-port";

    static final int DEFAULT_BOOTSTRAP_PORT = 8998;
    /** The gateway's Prometheus port: its launcher's default (router_args.py, --prometheus-port 29000). */
    static final int METRICS_PORT = 29000;
    /**
     * The user the image runs as: docker/Dockerfile at v1.9.0 creates it with {@code useradd --uid 65532 smg} and
     * sets {@code USER smg}. Kubernetes can check runAsNonRoot only against a number, so it is given as one.
     */
    static final long RUN_AS_USER = 65532;

    @Override
    public List<Container> containers(DesiredDeployment deployment, DesiredRouter router) {
        // model_gateway/src/server.rs: /health answers while the process serves; /readiness is false while no
        // worker is healthy, which would hide the router, and its worker list, whenever its last worker leaves
        return List.of(RouterParts.singleProcess(
                router,
                args(deployment),
                servicePorts(),
                "/health",
                RouterAdmin.of(RouterKind.SGLANG_GATEWAY).port(),
                RouterDrain.of(deployment)));
    }

    /**
     * Flags of the launcher, bindings/python/src/smg/router_args.py at v1.9.0: --service-discovery is a switch,
     * selectors take k=v pairs, the worker port defaults to 80 and the namespace to all of them, so both are set; the
     * gateway reaches every worker on that one port (admission refuses roles on different ports). A prefill/decode
     * split runs with --pd-disaggregation and a selector per half; only Pods matching one of them are taken
     * (service_discovery.rs, PodInfo::should_include).
     *
     * <p>--shutdown-grace-period-secs (router_args.py, default 180) bounds its own drain, model_gateway/src/server.rs
     * at v1.9.0: at SIGTERM /readiness answers 503 at once, the listener takes new connections for min(grace / 2, 5 s)
     * more, then axum's graceful shutdown refuses new ones and lets those open run to their end for the rest of the
     * grace, cutting what is left. Seen with the 1.9.0 wheel: a stream begun before SIGTERM completed under a grace of
     * 30 s and was cut at 4 s under a grace of 4. So it is given the router's whole drain.
     */
    static List<String> args(DesiredDeployment deployment) {
        List<String> gateway = new ArrayList<>(List.of(
                "--host",
                "0.0.0.0",
                "--port",
                Integer.toString(RouterAdmin.of(RouterKind.SGLANG_GATEWAY).port()),
                "--service-discovery"));
        if (VllmRouterLayout.disaggregated(deployment)) {
            gateway.add("--pd-disaggregation");
            gateway.add("--prefill-selector");
            gateway.addAll(pairs(selectsKind(deployment, RoleKind.Prefill)));
            gateway.add("--decode-selector");
            gateway.addAll(pairs(selectsKind(deployment, RoleKind.Decode)));
        } else {
            gateway.add("--selector");
            gateway.addAll(pairs(RouterRenderer.selects(deployment)));
        }
        gateway.addAll(List.of(
                "--service-discovery-port",
                Integer.toString(deployment.roles().get(0).port()),
                "--service-discovery-namespace",
                deployment.owner().namespace(),
                "--prometheus-port",
                Integer.toString(METRICS_PORT),
                "--policy",
                "cache_aware",
                "--shutdown-grace-period-secs",
                Integer.toString(RouterDrain.of(deployment).drain())));
        return List.copyOf(gateway);
    }

    private static Map<String, String> selectsKind(DesiredDeployment deployment, RoleKind kind) {
        Map<String, String> labels = new LinkedHashMap<>(RouterRenderer.selects(deployment));
        labels.put(Labels.ROLE_KIND, kind.wireName());
        return labels;
    }

    private static List<String> pairs(Map<String, String> labels) {
        return labels.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .toList();
    }

    /**
     * A prefill leader tells the gateway where its bootstrap server listens, which decode servers are sent to; without
     * it the gateway gives them none (service_discovery.rs parses the annotation as a port, and nothing else).
     */
    @Override
    public Map<String, String> memberAnnotations(MemberSlot slot) {
        if (slot.role().kind() != RoleKind.Prefill || !slot.leader()) {
            return Map.of();
        }
        return Map.of(BOOTSTRAP_PORT_ANNOTATION, Integer.toString(bootstrapPort(slot.role())));
    }

    /** The port the role's own command line gives the bootstrap server, else SGLang's default. */
    static int bootstrapPort(DesiredRole role) {
        List<String> argv = role.takeOver() ? role.command() : role.extraArgs();
        int port = DEFAULT_BOOTSTRAP_PORT;
        for (int i = 0; i < argv.size(); i++) {
            String arg = argv.get(i);
            String value = arg.equals(BOOTSTRAP_PORT_FLAG) && i + 1 < argv.size()
                    ? argv.get(i + 1)
                    : arg.startsWith(BOOTSTRAP_PORT_FLAG + "=")
                            ? arg.substring(BOOTSTRAP_PORT_FLAG.length() + 1)
                            : null;
            if (value != null) {
                try {
                    int parsed = Integer.parseInt(value);
                    if (parsed > 0 && parsed <= 65535) {
                        // the last one wins, as with argparse
                        port = parsed;
                    }
                } catch (NumberFormatException e) {
                    // SGLang itself refuses such a command line; the default stands for the annotation
                }
            }
        }
        return port;
    }

    @Override
    public Map<String, String> files(DesiredDeployment deployment) {
        return Map.of();
    }

    @Override
    public List<ServicePort> servicePorts() {
        return List.of(
                RouterParts.servicePort(
                        "http", RouterAdmin.of(RouterKind.SGLANG_GATEWAY).port()),
                RouterParts.servicePort("metrics", METRICS_PORT));
    }

    /** The launcher is Python; whatever it or its libraries write goes to scratch space, not to the read-only image. */
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

    /** Its discovery only lists and watches Pods (service_discovery.rs: Api&lt;Pod&gt; list and watcher). */
    @Override
    public List<PolicyRule> rules() {
        return List.of(RouterParts.podReader());
    }
}
