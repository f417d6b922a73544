package dev.ebb.operator.sim;

import dev.ebb.operator.api.Annotations;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.net.URI;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A router in front of a deployment's Pods, as llm-d's scheduler, vLLM's router and SGLang's gateway behave:
 * it watches the Pods, picks among the ready ones its selector matches, drops a Pod the moment the Pod has a
 * deletion timestamp or stops matching, and records every dispatch. It can be taken down.
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

    /**
     * @param watch the labels of the Pods the router learns about (its discovery)
     * @param selector the labels a Pod must carry, at the moment of a pick, to be chosen
     */
    public FakeRouter(KubernetesClient client, String namespace, Map<String, String> watch, Map<String, String> selector) {
        this.selector = Map.copyOf(selector);
        this.pods = client.pods().inNamespace(namespace).withLabels(watch).inform();
    }

    /** The Pods the router would route to now. Empty while the router is down. */
    public List<Pod> selected() {
        if (!up) {
            return List.of();
        }
        return pods.getStore().list().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> SimEndpoints.selects(selector, p.getMetadata().getLabels()))
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
        return pod.getStatus() != null && pod.getStatus().getPodIP() != null && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    @Override
    public void close() {
        pods.close();
    }
}
