package dev.ebb.operator.sim;

import io.fabric8.kubernetes.client.KubernetesClient;

/** The pieces of a cluster the mock API server lacks, started together around one client. */
public final class SimWorld implements AutoCloseable {
    private final LoopbackAddresses addresses = new LoopbackAddresses();
    private final SimKubelet kubelet;
    private final SimEndpoints endpoints;
    private final SimRouterPods routerPods;

    public SimWorld(KubernetesClient client) {
        this.kubelet = new SimKubelet(client, addresses);
        this.endpoints = new SimEndpoints(client);
        this.routerPods = new SimRouterPods(client);
    }

    public SimKubelet kubelet() {
        return kubelet;
    }

    public SimEndpoints endpoints() {
        return endpoints;
    }

    @Override
    public void close() {
        routerPods.close();
        kubelet.close();
        endpoints.close();
    }
}
