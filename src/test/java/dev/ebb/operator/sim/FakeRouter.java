package dev.ebb.operator.sim;

import dev.ebb.operator.api.Annotations;
import com.sun.net.httpserver.HttpServer;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterAdmin;
import dev.ebb.operator.route.RouterAnswers;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * A router in front of a deployment's Pods, as llm-d's scheduler, vLLM's router and SGLang's gateway behave:
 * it watches the Pods, picks among the ready ones its selector matches, drops a Pod the moment the Pod has a
 * deletion timestamp or stops matching, and records every dispatch. It can be taken down.
 *
 * <p>One instance is one replica of the router: a router Deployment of several replicas is several instances, each
 * with its own watch, its own view of the Pods, its own dispatch counts and its own answer. So do the released
 * routers: vLLM's router keeps the engines it found in its own process, fed by its own watch thread
 * (production-stack src/vllm_router/service_discovery.py, K8sPodIPServiceDiscovery), so one replica whose watch
 * missed a change keeps an engine the others dropped.
 */
public final class FakeRouter implements LoadGenerator.Target, AutoCloseable {
    /** One request sent to one Pod. */
    public record Dispatch(String pod, Instant at) {
    }

    private final Map<String, String> selector;
    private final SharedIndexInformer<Pod> pods;
    private final List<Dispatch> dispatches = new CopyOnWriteArrayList<>();
    private final AtomicLong turn = new AtomicLong();
    private volatile boolean up = true;
    private HttpServer admin;
    private final Set<String> pinned = ConcurrentHashMap.newKeySet();

    /**
     * @param watch the labels of the Pods the router learns about (its discovery)
     * @param selector the labels a Pod must carry, at the moment of a pick, to be chosen
     */
    public FakeRouter(KubernetesClient client, String namespace, Map<String, String> watch, Map<String, String> selector) {
        this.selector = Map.copyOf(selector);
        this.pods = client.pods().inNamespace(namespace).withLabels(watch).inform();
    }

    /**
     * A router in front of a deployment as the operator labels it: it learns of every Pod of the deployment and
     * routes to the serving leaders, the labels its role Service selects on.
     */
    public static FakeRouter inFrontOf(KubernetesClient client, String namespace, String deployment) {
        return new FakeRouter(client, namespace, Map.of(Labels.DEPLOYMENT, deployment),
                Map.of(Labels.DEPLOYMENT, deployment, Labels.SERVING, Labels.SERVING_YES, Labels.MEMBER_INDEX, Labels.LEADER_INDEX));
    }

    /** The Pods the router would route to now. Empty while the router is down. */
    public List<Pod> selected() {
        if (!up) {
            return List.of();
        }
        return pods.getStore().list().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> pinned.contains(p.getMetadata().getName()) || SimEndpoints.selects(selector, p.getMetadata().getLabels()))
                .filter(FakeRouter::ready)
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .toList();
    }

    public boolean selects(String pod) {
        return selected().stream().anyMatch(p -> p.getMetadata().getName().equals(pod));
    }

    @Override
    public Optional<RouteTarget> pick() {
        List<Pod> candidates = selected();
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        Pod pod = candidates.get((int) (turn.getAndIncrement() % candidates.size()));
        dispatches.add(new Dispatch(pod.getMetadata().getName(), Instant.now()));
        return Optional.of(new RouteTarget(pod.getMetadata().getName(), base(pod)));
    }

    public List<Dispatch> dispatches() {
        return List.copyOf(dispatches);
    }

    public List<Dispatch> dispatchesTo(String pod, Instant since) {
        return dispatches.stream().filter(d -> d.pod().equals(pod) && !d.at().isBefore(since)).toList();
    }

    public boolean isUp() {
        return up;
    }

    public void setUp(boolean value) {
        up = value;
    }

    static URI base(Pod pod) {
        String scheme = Optional.ofNullable(pod.getMetadata().getAnnotations()).map(a -> a.get(Annotations.SCRAPE_SCHEME)).orElse("http");
        int port = pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort();
        return URI.create(scheme + "://" + pod.getStatus().getPodIP() + ":" + port);
    }

    private static boolean ready(Pod pod) {
        return Readiness.isPodReady(pod) && pod.getStatus().getPodIP() != null;
    }

    /**
     * Starts answering on loopback as the given real router answers the operator's question: SGLang's gateway lists
     * its workers with their request counts, vLLM's router lists its engines by id, llm-d's endpoint picker shows a
     * queue gauge per endpoint it holds and a count of scheduling decisions per endpoint. A router that is down
     * answers 503. Returns the address of that answer.
     */
    public URI serveAdmin(RouterKind kind) throws IOException {
        RouterAdmin route = RouterAdmin.of(kind);
        admin = HttpServer.create(new InetSocketAddress(new LoopbackAddresses().next(), 0), 0);
        admin.createContext(route.path(), exchange -> {
            byte[] body = (up ? answer(kind) : "router unavailable").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(up ? 200 : 503, body.length);
            try (var out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        admin.start();
        return URI.create("http://" + admin.getAddress().getHostString() + ":" + admin.getAddress().getPort() + route.path());
    }

    private String answer(RouterKind kind) {
        List<Pod> selected = selected();
        Map<String, Long> sent = dispatches.stream().collect(Collectors.groupingBy(Dispatch::pod, Collectors.counting()));
        return switch (kind) {
            case SGLANG_GATEWAY -> "{\"workers\":[" + selected.stream()
                    .map(p -> "{\"url\":\"" + base(p) + "\",\"healthy\":true,\"model\":\"m\",\"requests_total\":"
                            + sent.getOrDefault(p.getMetadata().getName(), 0L) + "}")
                    .collect(Collectors.joining(",")) + "],\"total\":" + selected.size() + ",\"healthy\":" + selected.size() + "}";
            case VLLM_ROUTER -> "[" + selected.stream()
                    .map(p -> "{\"engine_id\":\"" + RouterAnswers.vllmEngineId(p.getMetadata().getName())
                            + "\",\"serving_models\":[\"m\"],\"created\":1764000000}")
                    .collect(Collectors.joining(",")) + "]";
            case LLM_D_ROUTER -> {
                StringBuilder page = new StringBuilder("# HELP llm_d_router_epp_per_endpoint_queue_size Waiting queue per endpoint.\n"
                        + "# TYPE llm_d_router_epp_per_endpoint_queue_size gauge\n");
                selected.forEach(p -> page.append("llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint=\"")
                        .append(p.getMetadata().getName()).append("\",name=\"pool\"} 0\n"));
                page.append("# HELP llm_d_router_epp_scheduler_attempts_total Scheduling decisions.\n"
                        + "# TYPE llm_d_router_epp_scheduler_attempts_total counter\n");
                sent.forEach((pod, count) -> page.append("llm_d_router_epp_scheduler_attempts_total{endpoint_name=\"").append(pod)
                        .append("\",namespace=\"ns\",port=\"8000\",status=\"success\",target_model_name=\"m\"} ").append(count).append("\n"));
                yield page.toString();
            }
        };
    }

    /** The router keeps selecting this Pod whatever its labels say, as a router whose discovery lags would. */
    public void pin(String pod, boolean value) {
        if (value) {
            pinned.add(pod);
        } else {
            pinned.remove(pod);
        }
    }

    /** A dispatch the router reports as made now, whatever the selection says: a late decision in flight. */
    public void reportDispatch(String pod) {
        dispatches.add(new Dispatch(pod, Instant.now()));
    }

    @Override
    public void close() {
        pods.close();
        if (admin != null) {
            admin.stop(0);
        }
    }
}
