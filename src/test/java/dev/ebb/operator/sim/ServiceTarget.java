package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/** A client reaching a role through its Service: kube-proxy spreads connections over the ready endpoints. */
public final class ServiceTarget implements LoadGenerator.Target {
    private final EndpointSlices endpoints;
    private final String namespace;
    private final String service;
    private final AtomicLong turn = new AtomicLong();

    public ServiceTarget(EndpointSlices endpoints, String namespace, String service) {
        this.endpoints = endpoints;
        this.namespace = namespace;
        this.service = service;
    }

    @Override
    public Optional<RouteTarget> pick() {
        for (EndpointSlice slice : endpoints.slicesOf(namespace, service)) {
            // a Service with no endpoints has a placeholder slice whose lists are null
            if (slice.getEndpoints() == null
                    || slice.getPorts() == null
                    || slice.getPorts().isEmpty()) {
                continue;
            }
            List<Endpoint> ready = slice.getEndpoints().stream()
                    .filter(e -> Boolean.TRUE.equals(e.getConditions().getReady()))
                    .toList();
            if (!ready.isEmpty()) {
                Endpoint e = ready.get((int) (turn.getAndIncrement() % ready.size()));
                URI base = URI.create("http://" + e.getAddresses().get(0) + ":" + clientPort(slice));
                return Optional.of(new RouteTarget(e.getTargetRef().getName(), base));
            }
        }
        return Optional.empty();
    }

    /**
     * The port clients use: the one named http where the Service has several (a router's also serves its metrics), as
     * a client names its Service port; a slice lists its ports in no set order.
     */
    private static int clientPort(EndpointSlice slice) {
        return slice.getPorts().stream()
                .filter(p -> "http".equals(p.getName()))
                .findFirst()
                .orElse(slice.getPorts().get(0))
                .getPort();
    }
}
