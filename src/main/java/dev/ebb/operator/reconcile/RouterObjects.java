package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterRenderer;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
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

    private final KubernetesClient client;

    public RouterObjects(KubernetesClient client) {
        this.client = client;
    }

    /** Brings the router in line with the spec; returns its status, empty when the deployment has none. */
    public Optional<RouterStatus> converge(ModelDeployment md, DesiredDeployment deployment, Optional<Deployment> existing) {
        List<HasMetadata> objects = RouterRenderer.render(deployment);
        if (objects.isEmpty()) {
            existing.ifPresent(d -> remove(md));
            return Optional.empty();
        }
        String hash = hash(objects);
        boolean current = existing.map(d -> d.getMetadata().getAnnotations()).map(a -> hash.equals(a.get(APPLIED_HASH))).orElse(false);
        if (!current) {
            for (HasMetadata object : objects) {
                if (object instanceof Deployment d) {
                    d.getMetadata().setAnnotations(Map.of(APPLIED_HASH, hash));
                }
                client.resource(object).createOr(NonDeletingOperation::update);
            }
        }
        int ready = existing.map(d -> d.getStatus()).map(s -> s.getReadyReplicas()).orElse(0);
        return Optional.of(new RouterStatus(deployment.router().get().kind().wireName(), ready > 0, ready));
    }

    /** Removes every object of the deployment's router, whatever the spec says now. */
    void remove(ModelDeployment md) {
        String name = Names.router(md.getMetadata().getName());
        String namespace = md.getMetadata().getNamespace();
        client.apps().deployments().inNamespace(namespace).withName(name).delete();
        client.services().inNamespace(namespace).withName(name).delete();
        client.configMaps().inNamespace(namespace).withName(name).delete();
        client.rbac().roleBindings().inNamespace(namespace).withName(name).delete();
        client.rbac().roles().inNamespace(namespace).withName(name).delete();
        client.serviceAccounts().inNamespace(namespace).withName(name).delete();
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
