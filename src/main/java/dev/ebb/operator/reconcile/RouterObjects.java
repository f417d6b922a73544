package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterRenderer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Keeps the router's objects as the renderer says, writing only when what it renders changed (a hash on the
 * Deployment records what was applied), removes them when the spec drops the router, and reads its readiness.
 */
@ApplicationScoped
public class RouterObjects {
    static final String APPLIED_HASH = "serving.ebb.dev/router-hash";
    private static final KubernetesSerialization JSON = new KubernetesSerialization();

    /** Every kind of object a router may have, in the order they are removed. */
    private static final List<Class<? extends HasMetadata>> KINDS = List.of(Deployment.class, Service.class, ConfigMap.class,
            RoleBinding.class, Role.class, ServiceAccount.class);

    private final OwnedObjects owned;

    public RouterObjects(OwnedObjects owned) {
        this.owned = owned;
    }

    /**
     * What converging the router came to.
     *
     * @param status the router's status, empty when the deployment has none
     * @param conflicts the router's names that another owner holds; while there are any, none of its objects is written
     */
    public record Outcome(Optional<RouterStatus> status, List<Ownership.Conflict> conflicts) {
    }

    /** Brings the router in line with the spec. */
    public Outcome converge(ModelDeployment md, DesiredDeployment deployment, Optional<Deployment> existing) {
        List<HasMetadata> objects = RouterRenderer.render(deployment);
        if (objects.isEmpty()) {
            existing.ifPresent(d -> remove(md));
            return new Outcome(Optional.empty(), List.of());
        }
        String hash = hash(objects);
        boolean current = existing.map(d -> d.getMetadata().getAnnotations()).map(a -> hash.equals(a.get(APPLIED_HASH))).orElse(false);
        List<Ownership.Conflict> conflicts = new ArrayList<>();
        if (!current) {
            // a router missing one of its objects cannot run, so it is written whole or not at all
            objects.forEach(object -> owned.holderOf(md, object).ifPresent(conflicts::add));
            if (conflicts.isEmpty()) {
                for (HasMetadata object : objects) {
                    if (object instanceof Deployment d) {
                        d.getMetadata().setAnnotations(Map.of(APPLIED_HASH, hash));
                    }
                    owned.apply(md, object).ifPresent(conflicts::add);
                }
            }
        }
        int ready = existing.map(d -> d.getStatus()).map(s -> s.getReadyReplicas()).orElse(0);
        return new Outcome(Optional.of(new RouterStatus(deployment.router().get().kind().wireName(),
                RouterRenderer.clientAddress(deployment), ready > 0, ready)),
                List.copyOf(conflicts));
    }

    /** Removes every object of the deployment's router that is its own, whatever the spec says now. */
    void remove(ModelDeployment md) {
        String name = Names.router(md.getMetadata().getName());
        KINDS.forEach(kind -> owned.deleteNamed(md, kind, name));
    }

    private static String hash(List<HasMetadata> objects) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(JSON.asJson(objects).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
