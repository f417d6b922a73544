package dev.ebb.operator.sim;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.route.RouterProbe;
import dev.ebb.operator.route.RouterView;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The operator's view of routers in the test world: a test puts a fake router in front of a deployment, and the
 * operator asks that router. A deployment with no fake router registered has a router nobody can reach.
 */
@Alternative
@Priority(1)
@Singleton
public class SimRouterProbe implements RouterProbe {
    private final Map<String, FakeRouter> routers = new ConcurrentHashMap<>();

    public void put(String namespace, String deployment, FakeRouter router) {
        routers.put(namespace + "/" + deployment, router);
    }

    public void remove(String namespace, String deployment) {
        routers.remove(namespace + "/" + deployment);
    }

    @Override
    public RouterView view(ModelDeployment deployment, Set<String> members, Instant withdrawnAt) {
        FakeRouter router = routers.get(deployment.getMetadata().getNamespace() + "/" + deployment.getMetadata().getName());
        if (router == null || !router.isUp()) {
            return RouterView.unavailable();
        }
        boolean selects = members.stream().anyMatch(router::selects);
        boolean dispatched = members.stream().anyMatch(m -> !router.dispatchesTo(m, withdrawnAt).isEmpty());
        return new RouterView(Optional.of(selects), dispatched);
    }
}
