package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.render.RoutingProxy;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The port of a member that the role's Service targets, read from the Pod as it was deployed: the routing proxy's
 * where one fronts the engine, the engine's otherwise. Clients through the Service connect to this port. Pure.
 */
final class ServicePort {
    private ServicePort() {}

    static Optional<Integer> of(Pod pod) {
        if (pod.getSpec() == null) {
            return Optional.empty();
        }
        Stream<Container> containers = Stream.concat(
                pod.getSpec().getInitContainers() == null ? Stream.empty() : pod.getSpec().getInitContainers().stream(),
                pod.getSpec().getContainers() == null ? Stream.empty() : pod.getSpec().getContainers().stream());
        return containers
                .flatMap(ServicePort::candidates)
                .sorted((a, b) -> Boolean.compare(b.proxy(), a.proxy()))
                .map(Candidate::port)
                .findFirst();
    }

    private record Candidate(int port, boolean proxy) {}

    private static Stream<Candidate> candidates(Container container) {
        boolean proxy = RoutingProxy.CONTAINER.equals(container.getName());
        String wanted = proxy ? RoutingProxy.PORT_NAME : PodRenderer.PORT_NAME;
        if (!proxy && !EnginePod.CONTAINER.equals(container.getName()) || container.getPorts() == null) {
            return Stream.empty();
        }
        return container.getPorts().stream()
                .filter(p -> wanted.equals(p.getName()) && p.getContainerPort() != null)
                .map(ContainerPort::getContainerPort)
                .filter(port -> port >= 1 && port <= 65535)
                .map(port -> new Candidate(port, proxy));
    }
}
