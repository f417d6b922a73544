package dev.ebb.operator.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RouterRenderer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiPredicate;

/**
 * Keeps the router's objects as the renderer says, removes them when the spec drops the router, and reads its
 * readiness. A new rendering (a hash on the Deployment records the one applied) is written whole; between renderings
 * every object is compared on every pass with what was rendered, from the informers' caches ({@link RenderedFields}),
 * and one deleted or edited by hand is put back.
 */
@ApplicationScoped
public class RouterObjects {
    static final String APPLIED_HASH = "serving.ebb.dev/router-hash";
    private static final KubernetesSerialization JSON = new KubernetesSerialization();

    /** Every kind of object a router may have, in the order they are removed. */
    static final List<Class<? extends HasMetadata>> KINDS = List.of(
            Deployment.class,
            PodDisruptionBudget.class,
            Service.class,
            ConfigMap.class,
            RoleBinding.class,
            Role.class,
            ServiceAccount.class);

    private final OwnedObjects owned;

    public RouterObjects(OwnedObjects owned) {
        this.owned = owned;
    }

    /**
     * What converging the router came to.
     *
     * @param status the router's status, empty when the deployment has none
     * @param conflicts the router's names that another owner holds; while there are any, none of its objects is written
     * @param repairs the objects found deleted or changed and put back
     * @param imagesChange what a new rendering written on this pass changes in the router's images, to be told
     */
    public record Outcome(
            Optional<RouterStatus> status,
            List<Ownership.Conflict> conflicts,
            List<Repair> repairs,
            Optional<String> imagesChange) {}

    /** One of the router's objects found deleted or changed since it was written, and put back. */
    public record Repair(String kind, String name, OwnedObjects.Restored what) {
        public String message() {
            return kind + " " + name
                    + (what == OwnedObjects.Restored.RECREATED
                            ? " was missing and is created again"
                            : " differed from what the operator renders for it and is put back")
                    + ", as the router needs it";
        }
    }

    /** Brings the router in line with the spec. */
    public Outcome converge(
            ModelDeployment md, DesiredDeployment deployment, Context<ModelDeployment> context, List<Pod> routerPods) {
        List<HasMetadata> objects = RouterRenderer.render(deployment);
        Optional<Deployment> existing =
                cached(context, Deployment.class, Names.router(md.getMetadata().getName()));
        if (objects.isEmpty()) {
            existing.ifPresent(d -> remove(md));
            return new Outcome(Optional.empty(), List.of(), List.of(), Optional.empty());
        }
        String hash = hash(objects);
        Deployment rendered = objects.stream()
                .filter(Deployment.class::isInstance)
                .map(Deployment.class::cast)
                .findFirst()
                .orElseThrow();
        rendered.getMetadata().setAnnotations(Map.of(APPLIED_HASH, hash));
        boolean current = existing.map(d -> d.getMetadata().getAnnotations())
                .map(a -> hash.equals(a.get(APPLIED_HASH)))
                .orElse(false);
        List<Ownership.Conflict> conflicts = new ArrayList<>();
        List<Repair> repairs = new ArrayList<>();
        Optional<String> imagesChange = Optional.empty();
        if (!current) {
            // a router missing one of its objects cannot run, so it is written whole or not at all
            objects.forEach(object -> owned.holderOf(md, object).ifPresent(conflicts::add));
            if (conflicts.isEmpty()) {
                objects.forEach(object -> owned.apply(md, object).ifPresent(conflicts::add));
                imagesChange = RouterRollout.imagesChange(existing, rendered);
            }
        } else {
            BiPredicate<HasMetadata, HasMetadata> matches = RouterObjects::asRendered;
            for (HasMetadata object : objects) {
                boolean asRendered = cached(
                                context, object.getClass(), object.getMetadata().getName())
                        .filter(actual -> matches.test(object, actual))
                        .isPresent();
                if (!asRendered) {
                    OwnedObjects.Restoration restored = owned.restore(md, object, matches);
                    restored.conflict().ifPresent(conflicts::add);
                    if (restored.what() != OwnedObjects.Restored.NOTHING_TO_DO) {
                        repairs.add(new Repair(
                                object.getKind(), object.getMetadata().getName(), restored.what()));
                    }
                }
            }
        }
        int ready =
                existing.map(d -> d.getStatus()).map(s -> s.getReadyReplicas()).orElse(0);
        return new Outcome(
                Optional.of(new RouterStatus(
                                deployment.router().get().kind().wireName(),
                                RouterRenderer.clientAddress(deployment),
                                ready > 0,
                                ready)
                        .withImageOutdated(RouterRollout.behind(routerPods, rendered))),
                List.copyOf(conflicts),
                List.copyOf(repairs),
                imagesChange);
    }

    /** Whether what exists holds everything rendered for it, labels and annotations included. */
    public static boolean asRendered(HasMetadata desired, HasMetadata actual) {
        return RenderedFields.heldBy(
                JSON.convertValue(desired, JsonNode.class), JSON.convertValue(actual, JsonNode.class));
    }

    private static <T extends HasMetadata> Optional<T> cached(
            Context<ModelDeployment> context, Class<T> kind, String name) {
        return context.getSecondaryResources(kind).stream()
                .filter(o -> name.equals(o.getMetadata().getName()))
                .findFirst();
    }

    /** Removes every object of the deployment's router that is its own, whatever the spec says now. */
    void remove(ModelDeployment md) {
        String name = Names.router(md.getMetadata().getName());
        KINDS.forEach(kind -> owned.deleteNamed(md, kind, name));
    }

    private static String hash(List<HasMetadata> objects) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(JSON.asJson(objects).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
