package dev.ebb.operator.sim;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.route.RouterAddress;
import io.fabric8.kubernetes.api.model.Pod;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The router Pods of the test world run nothing: a test puts fake routers in front of a deployment, one behind each
 * router Pod, each serving clients and answering in that router's own dialect on its own loopback address, and the
 * operator's real probe asks them there. A router Pod no fake router stands behind cannot be asked.
 */
@Alternative
@Priority(1)
@Singleton
public class SimRouterAddress implements RouterAddress {
    private final Map<String, List<URI>> routers = new ConcurrentHashMap<>();

    /**
     * Points the operator at each replica's answer: the first replica answers for the router's first Pod, the second
     * for its second, and so on. Each must be a router of the deployment's kind.
     */
    public void put(String namespace, String deployment, RouterKind kind, FakeRouter... replicas) {
        List<URI> admins = new ArrayList<>();
        for (FakeRouter replica : replicas) {
            if (replica.kind() != kind) {
                throw new IllegalArgumentException(
                        "a " + replica.kind() + " router cannot stand behind a " + kind + " Pod");
            }
            admins.add(replica.adminUri());
        }
        routers.put(namespace + "/" + deployment, List.copyOf(admins));
    }

    public void remove(String namespace, String deployment) {
        routers.remove(namespace + "/" + deployment);
    }

    /** The replica put in front of this router Pod, by the Pod's ordinal; none for a Pod no test put one behind. */
    @Override
    public Optional<URI> of(Pod routerPod, RouterKind kind) {
        String deployment = Optional.ofNullable(routerPod.getMetadata().getLabels())
                .map(l -> l.get(Labels.DEPLOYMENT))
                .orElse("");
        List<URI> replicas = routers.getOrDefault(routerPod.getMetadata().getNamespace() + "/" + deployment, List.of());
        for (int ordinal = 0; ordinal < replicas.size(); ordinal++) {
            if (routerPod.getMetadata().getName().equals(SimRouterPods.podName(Names.router(deployment), ordinal))) {
                return Optional.of(replicas.get(ordinal));
            }
        }
        return Optional.empty();
    }
}
