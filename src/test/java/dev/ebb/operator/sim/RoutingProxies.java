package dev.ebb.operator.sim;

import dev.ebb.operator.render.RoutingProxy;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** The routing proxy container of a Pod, as the kubelet finds and starts it: a native sidecar or a classic container. */
final class RoutingProxies {
    private RoutingProxies() {
    }

    static Optional<Container> of(Pod pod) {
        return Stream.concat(listOrEmpty(pod.getSpec().getInitContainers()).stream(), listOrEmpty(pod.getSpec().getContainers()).stream())
                .filter(c -> RoutingProxy.CONTAINER.equals(c.getName())).findFirst();
    }

    /** An init container that restarts always: it runs beside the main containers, started before and stopped after them. */
    static boolean nativeSidecar(Pod pod) {
        return listOrEmpty(pod.getSpec().getInitContainers()).stream()
                .anyMatch(c -> RoutingProxy.CONTAINER.equals(c.getName()) && "Always".equals(c.getRestartPolicy()));
    }

    /** The port the proxy listens on, which the role's Service and llm-d's router target on the Pod. */
    static Optional<Integer> port(Pod pod) {
        return of(pod).flatMap(c -> flag(c.getArgs(), "--port=")).map(Integer::parseInt);
    }

    /** Starts the Pod's proxy, when it has one, with the ports its own flags name. */
    static Optional<FakeRoutingProxy> start(Pod pod, String address) throws IOException {
        Optional<Container> proxy = of(pod);
        if (proxy.isEmpty()) {
            return Optional.empty();
        }
        List<String> args = listOrEmpty(proxy.get().getArgs());
        int port = Integer.parseInt(flag(args, "--port=").orElseThrow(() -> new IOException("the routing proxy names no --port")));
        int engine = Integer.parseInt(flag(args, "--model-server-port=").orElseThrow(() -> new IOException("the routing proxy names no --model-server-port")));
        return Optional.of(FakeRoutingProxy.start(address, port, engine));
    }

    private static Optional<String> flag(List<String> args, String prefix) {
        return listOrEmpty(args).stream().filter(a -> a.startsWith(prefix)).map(a -> a.substring(prefix.length())).findFirst();
    }

    private static <T> List<T> listOrEmpty(List<T> list) {
        return list == null ? List.of() : list;
    }
}
