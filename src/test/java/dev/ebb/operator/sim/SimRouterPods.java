package dev.ebb.operator.sim;

import dev.ebb.operator.render.RouterRenderer;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jboss.logging.Logger;

/**
 * The Deployment controller the mock API server lacks, for the routers the operator runs: each router Deployment
 * keeps one Pod per replica, made from its template and owned by it, and loses them when it goes. The kubelet then
 * binds each, with an address of its own. A real Deployment names its Pods after a ReplicaSet and a random suffix;
 * here they are named by ordinal, so that a test can put one fake router behind each.
 */
public final class SimRouterPods implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SimRouterPods.class);

    private final KubernetesClient client;
    private final SharedIndexInformer<Deployment> deployments;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(DaemonThreads.named("sim-router-pods"));

    public SimRouterPods(KubernetesClient client) {
        this.client = client;
        this.deployments = client.apps()
                .deployments()
                .inAnyNamespace()
                .withLabel(RouterRenderer.COMPONENT, RouterRenderer.COMPONENT_ROUTER)
                .inform(new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Deployment deployment) {
                        worker.submit(() -> scale(deployment, replicas(deployment)));
                    }

                    @Override
                    public void onUpdate(Deployment old, Deployment deployment) {
                        worker.submit(() -> scale(deployment, replicas(deployment)));
                    }

                    @Override
                    public void onDelete(Deployment deployment, boolean unknown) {
                        worker.submit(() -> scale(deployment, 0));
                    }
                });
    }

    /** The name of a router Deployment's Pod for one replica. */
    public static String podName(String routerDeployment, int ordinal) {
        return routerDeployment + "-" + ordinal;
    }

    /** A router Pod as the kubelet reports it once bound: Running, Ready, at its own address. */
    public static Pod ready(String namespace, String name, String address) {
        return new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(namespace)
                .withUid("uid-" + name)
                .endMetadata()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP(address)
                .addNewCondition()
                .withType("Ready")
                .withStatus("True")
                .endCondition()
                .endStatus()
                .build();
    }

    private static int replicas(Deployment deployment) {
        return Optional.ofNullable(deployment.getSpec().getReplicas()).orElse(1);
    }

    private void scale(Deployment deployment, int replicas) {
        String namespace = deployment.getMetadata().getNamespace();
        String name = deployment.getMetadata().getName();
        try {
            for (Pod pod : client.pods()
                    .inNamespace(namespace)
                    .withLabels(deployment.getSpec().getSelector().getMatchLabels())
                    .list()
                    .getItems()) {
                if (!isWanted(pod.getMetadata().getName(), name, replicas)) {
                    client.resource(pod).delete();
                }
            }
            for (int ordinal = 0; ordinal < replicas; ordinal++) {
                String podName = podName(name, ordinal);
                if (client.pods().inNamespace(namespace).withName(podName).get() == null) {
                    client.resource(podOf(deployment, podName)).create();
                }
            }
        } catch (KubernetesClientException e) {
            LOG.debugf("router Pods of %s/%s not brought to %d: %s", namespace, name, replicas, e.getMessage());
        }
    }

    private static boolean isWanted(String pod, String deployment, int replicas) {
        for (int ordinal = 0; ordinal < replicas; ordinal++) {
            if (pod.equals(podName(deployment, ordinal))) {
                return true;
            }
        }
        return false;
    }

    private static Pod podOf(Deployment deployment, String name) {
        return new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(deployment.getMetadata().getNamespace())
                .withLabels(deployment.getSpec().getTemplate().getMetadata().getLabels())
                .withOwnerReferences(new OwnerReferenceBuilder()
                        .withApiVersion("apps/v1")
                        .withKind("Deployment")
                        .withName(deployment.getMetadata().getName())
                        .withUid(deployment.getMetadata().getUid())
                        .withController(true)
                        .build())
                .endMetadata()
                .withSpec(deployment.getSpec().getTemplate().getSpec())
                .build();
    }

    @Override
    public void close() {
        deployments.close();
        worker.shutdownNow();
    }
}
