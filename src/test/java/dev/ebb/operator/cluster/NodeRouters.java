package dev.ebb.operator.cluster;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterRenderer;
import dev.ebb.operator.sim.FakeRouter;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The router containers of a {@link ClusterNode}: each router Pod the real Deployment controller makes and the
 * scheduler binds here gets a fake router of its deployment's kind on the Pod's own address, at the client port the
 * operator rendered, once the agent has given the Pod an address; it stops when the Pod goes.
 */
final class NodeRouters implements AutoCloseable {
    private final KubernetesClient client;
    private final Map<String, FakeRouter> running = new ConcurrentHashMap<>();
    private final SharedIndexInformer<Pod> pods;

    NodeRouters(KubernetesClient client, String nodeName) {
        this.client = client;
        this.pods = client.pods().inAnyNamespace().withLabel(RouterRenderer.COMPONENT, RouterRenderer.COMPONENT_ROUTER)
                .withField("spec.nodeName", nodeName)
                .inform(new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Pod pod) {
                        follow(pod);
                    }

                    @Override
                    public void onUpdate(Pod old, Pod pod) {
                        follow(pod);
                    }

                    @Override
                    public void onDelete(Pod pod, boolean unknown) {
                        stop(pod);
                    }
                });
    }

    /** The router in front of one router Pod, once it runs. */
    Optional<FakeRouter> of(Pod routerPod) {
        return Optional.ofNullable(running.get(key(routerPod)));
    }

    private synchronized void follow(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            stop(pod);
            return;
        }
        String address = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
        if (address == null || running.containsKey(key(pod))) {
            return;
        }
        String deployment = pod.getMetadata().getLabels().get(Labels.DEPLOYMENT);
        ModelDeployment md = client.resources(ModelDeployment.class).inNamespace(pod.getMetadata().getNamespace()).withName(deployment).get();
        Optional<RouterKind> kind = Optional.ofNullable(md).map(m -> m.getSpec().router()).flatMap(r -> RouterKind.fromWireName(r.name()));
        Optional<Integer> entry = pod.getSpec().getContainers().stream().map(Container::getPorts).filter(ports -> ports != null)
                .flatMap(ports -> ports.stream()).filter(p -> "http".equals(p.getName())).map(ContainerPort::getContainerPort).findFirst();
        if (kind.isPresent() && entry.isPresent()) {
            running.put(key(pod), FakeRouter.inPodOf(client, pod.getMetadata().getNamespace(), deployment, kind.get(), address, entry.get()));
        }
    }

    private synchronized void stop(Pod pod) {
        Optional.ofNullable(running.remove(key(pod))).ifPresent(FakeRouter::close);
    }

    private static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    @Override
    public synchronized void close() {
        pods.close();
        running.values().forEach(FakeRouter::close);
        running.clear();
    }
}
