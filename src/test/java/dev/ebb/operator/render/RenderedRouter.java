package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;

/** What the router renderer made of a deployment, looked up as the router tests need it. */
final class RenderedRouter {
    private static final PodRenderer RENDERER = new PodRenderer();

    private RenderedRouter() {}

    /** The one object of this kind among the router's; two or none fail the test. */
    static <T extends HasMetadata> T only(List<HasMetadata> objects, Class<T> kind) {
        return objects.stream()
                .filter(kind::isInstance)
                .map(kind::cast)
                .reduce((a, b) -> {
                    throw new AssertionError("two " + kind.getSimpleName());
                })
                .orElseThrow(() -> new AssertionError("no " + kind.getSimpleName()));
    }

    static PodSpec podSpec(List<HasMetadata> objects) {
        return only(objects, Deployment.class).getSpec().getTemplate().getSpec();
    }

    static PodSpec podSpec(DesiredDeployment desired) {
        return podSpec(RouterRenderer.render(desired));
    }

    /** The router Pod's first container: the router itself. */
    static Container router(DesiredDeployment desired) {
        return podSpec(desired).getContainers().get(0);
    }

    /** A member Pod of the named role's first replica, as the Pod renderer makes it under this router. */
    static Pod member(DesiredDeployment desired, String roleName, int member) {
        DesiredRole role = desired.roles().stream()
                .filter(r -> r.name().equals(roleName))
                .findFirst()
                .orElseThrow();
        return RENDERER.render(new MemberSlot(desired, role, 0, member), "h");
    }
}
