package dev.ebb.operator.sim;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.route.RouterAddress;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Routers in the test world have no cluster DNS name: a test puts a fake router in front of a deployment, the fake
 * answers in that router's own dialect on loopback, and the operator's real probe asks it there. A deployment with
 * no fake router registered has a router nobody can reach.
 */
@Alternative
@Priority(1)
@Singleton
public class SimRouterAddress implements RouterAddress {
    /** Nothing listens here: asking it is refused at once. */
    private static final URI NOWHERE = URI.create("http://127.0.0.1:9/");
    private final Map<String, URI> routers = new ConcurrentHashMap<>();

    /** Serves the router's answer in the dialect of the deployment's router kind, and points the operator at it. */
    public void put(String namespace, String deployment, RouterKind kind, FakeRouter router) {
        try {
            routers.put(namespace + "/" + deployment, router.serveAdmin(kind));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void remove(String namespace, String deployment) {
        routers.remove(namespace + "/" + deployment);
    }

    @Override
    public URI of(ModelDeployment deployment, RouterKind kind) {
        return routers.getOrDefault(deployment.getMetadata().getNamespace() + "/" + deployment.getMetadata().getName(), NOWHERE);
    }
}
