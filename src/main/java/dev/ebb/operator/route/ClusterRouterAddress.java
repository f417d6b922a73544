package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterAdmin;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URI;

/** In a cluster the router is reached through its Service's DNS name. */
@ApplicationScoped
public class ClusterRouterAddress implements RouterAddress {
    @Override
    public URI of(ModelDeployment deployment, RouterKind kind) {
        RouterAdmin admin = RouterAdmin.of(kind);
        return URI.create("http://" + Names.router(deployment.getMetadata().getName()) + "." + deployment.getMetadata().getNamespace()
                + ".svc:" + admin.port() + admin.path());
    }
}
