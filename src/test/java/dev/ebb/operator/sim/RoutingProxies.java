package dev.ebb.operator.sim;

import dev.ebb.operator.render.RoutingProxy;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The routing proxy container of a Pod, as the kubelet finds and starts it: a native sidecar or a classic container. */
final class RoutingProxies {
    private RoutingProxies() {}

    /** An init container that restarts always: it runs beside the main containers, started before and stopped after them. */
    static boolean nativeSidecar(Pod pod) {
        return Objects.requireNonNullElse(pod.getSpec().getInitContainers(), List.<Container>of()).stream()
                .anyMatch(c -> RoutingProxy.CONTAINER.equals(c.getName()) && "Always".equals(c.getRestartPolicy()));
    }

    /** The port the proxy listens on, which the role's Service and llm-d's router target on the Pod. */
    static Optional<Integer> port(Pod pod) {
        return RoutingProxy.in(pod).flatMap(c -> flag(c, "--port=")).map(Integer::parseInt);
    }

    /** Starts the Pod's proxy, when it has one, with the ports its own flags name. */
    static Optional<FakeRoutingProxy> start(Pod pod, String address) throws IOException {
        Optional<Container> proxy = RoutingProxy.in(pod);
        if (proxy.isEmpty()) {
            return Optional.empty();
        }
        int port = Integer.parseInt(
                flag(proxy.get(), "--port=").orElseThrow(() -> new IOException("the routing proxy names no --port")));
        int engine = Integer.parseInt(flag(proxy.get(), "--model-server-port=")
                .orElseThrow(() -> new IOException("the routing proxy names no --model-server-port")));
        return Optional.of(FakeRoutingProxy.start(address, port, engine));
    }

    private static Optional<String> flag(Container proxy, String prefix) {
        return Objects.requireNonNullElse(proxy.getArgs(), List.<String>of()).stream()
                .filter(a -> a.startsWith(prefix))
                .map(a -> a.substring(prefix.length()))
                .findFirst();
    }
}
