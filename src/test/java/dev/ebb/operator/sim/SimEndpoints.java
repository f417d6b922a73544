package dev.ebb.operator.sim;

import dev.ebb.operator.api.Labels;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * The endpoints controller the mock API server lacks: one EndpointSlice per Service with a selector, listing the
 * selected Pods that have an address, with the conditions Kubernetes sets. A terminating Pod stays listed with
 * {@code ready=false}, {@code serving} = its readiness and {@code terminating=true}. Like the real controller, it
 * writes a slice only when its content changes, and a burst of events waits for one pass over the caches.
 */
public final class SimEndpoints implements EndpointSlices, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SimEndpoints.class);

    private final KubernetesClient client;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<Service> services;
    /** What each Service's slice was last written as, by namespace/name; only the worker touches it. */
    private final Map<String, EndpointSlice> written = new HashMap<>();

    private final AtomicBoolean passPending = new AtomicBoolean();
    private final ExecutorService worker = Executors.newSingleThreadExecutor(DaemonThreads.named("sim-endpoints"));

    public SimEndpoints(KubernetesClient client) {
        this.client = client;
        ResourceEventHandler<Object> resync = new ResourceEventHandler<>() {
            @Override
            public void onAdd(Object obj) {
                schedule();
            }

            @Override
            public void onUpdate(Object old, Object obj) {
                schedule();
            }

            @Override
            public void onDelete(Object obj, boolean unknown) {
                schedule();
            }
        };
        this.pods = client.pods().inAnyNamespace().inform(castHandler(resync));
        this.services = client.services().inAnyNamespace().inform(castHandler(resync));
    }

    @SuppressWarnings("unchecked")
    private static <T> ResourceEventHandler<T> castHandler(ResourceEventHandler<Object> handler) {
        return (ResourceEventHandler<T>) (ResourceEventHandler<?>) handler;
    }

    /** A pass reads the caches as they are when it runs, so one that has not started yet covers every later event. */
    private void schedule() {
        if (passPending.compareAndSet(false, true)) {
            worker.submit(this::syncAll);
        }
    }

    private void syncAll() {
        passPending.set(false);
        for (Service service : services.getStore().list()) {
            Map<String, String> selector = service.getSpec().getSelector();
            if (selector == null || selector.isEmpty()) {
                continue;
            }
            String key = service.getMetadata().getNamespace() + "/"
                    + service.getMetadata().getName();
            EndpointSlice slice = sliceFor(service, selector);
            if (slice.equals(written.get(key))) {
                continue;
            }
            try {
                client.resource(slice).createOr(NonDeletingOperation::update);
                written.put(key, slice);
            } catch (KubernetesClientException e) {
                LOG.debugf("endpoint slice for %s: %s", service.getMetadata().getName(), e.getMessage());
            }
        }
    }

    private EndpointSlice sliceFor(Service service, Map<String, String> selector) {
        String namespace = service.getMetadata().getNamespace();
        List<Endpoint> endpoints = pods.getStore().list().stream()
                .filter(p -> namespace.equals(p.getMetadata().getNamespace()))
                .filter(p -> p.getStatus() != null && p.getStatus().getPodIP() != null)
                .filter(p -> selects(selector, p.getMetadata().getLabels()))
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .map(SimEndpoints::endpoint)
                .toList();
        EndpointSliceBuilder slice = new EndpointSliceBuilder()
                .withNewMetadata()
                .withName(service.getMetadata().getName() + "-sim")
                .withNamespace(namespace)
                // as the real controller does: the Service's labels, then the two it always sets
                .addToLabels(
                        service.getMetadata().getLabels() == null
                                ? Map.of()
                                : service.getMetadata().getLabels())
                .addToLabels(Labels.SERVICE_NAME, service.getMetadata().getName())
                .addToLabels("endpointslice.kubernetes.io/managed-by", "sim-endpoints")
                .endMetadata()
                .withAddressType("IPv4");
        if (endpoints.isEmpty()) {
            // The real controller's placeholder for a Service that selects no Pod with an address: no endpoints and no
            // ports, which the API server answers as null lists (endpointslice v0.37.2, reconciler.go; read back from
            // kube-apiserver v1.37.2)
            return slice.build();
        }
        slice.withEndpoints(endpoints);
        service.getSpec()
                .getPorts()
                .forEach(port -> slice.addToPorts(new EndpointPortBuilder()
                        .withName(port.getName())
                        .withPort(
                                port.getTargetPort() == null
                                                || port.getTargetPort().getIntVal() == null
                                        ? port.getPort()
                                        : port.getTargetPort().getIntVal())
                        .withProtocol(port.getProtocol())
                        .build()));
        return slice.build();
    }

    private static Endpoint endpoint(Pod pod) {
        boolean terminating = pod.getMetadata().getDeletionTimestamp() != null;
        boolean podReady = Readiness.isPodReady(pod);
        return new EndpointBuilder()
                .withAddresses(pod.getStatus().getPodIP())
                .withNewConditions()
                .withReady(podReady && !terminating)
                .withServing(podReady)
                .withTerminating(terminating)
                .endConditions()
                .withNewTargetRef()
                .withKind("Pod")
                .withName(pod.getMetadata().getName())
                .withNamespace(pod.getMetadata().getNamespace())
                .withUid(pod.getMetadata().getUid())
                .endTargetRef()
                .build();
    }

    static boolean selects(Map<String, String> selector, Map<String, String> labels) {
        return labels != null
                && selector.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
    }

    @Override
    public List<EndpointSlice> slicesOf(String namespace, String service) {
        return client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .withLabel(Labels.SERVICE_NAME, service)
                .list()
                .getItems();
    }

    @Override
    public void close() {
        pods.close();
        services.close();
        worker.shutdownNow();
    }
}
