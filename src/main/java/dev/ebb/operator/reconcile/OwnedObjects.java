package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.lifecycle.LeaseGuard;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.URLUtils;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.function.BiPredicate;
import org.jboss.logging.Logger;

/**
 * Writes a ModelDeployment's objects only where they are its own: nothing is created over, changed or deleted while
 * another owner holds the name. What it cannot write for that reason comes back as a conflict, for status to report.
 */
@ApplicationScoped
public class OwnedObjects {
    private static final Logger LOG = Logger.getLogger(OwnedObjects.class);
    private final KubernetesClient client;
    private final LeaseGuard lease;

    public OwnedObjects(KubernetesClient client, LeaseGuard lease) {
        this.client = client;
        this.lease = lease;
    }

    /**
     * What a create came to.
     *
     * @param created whether this call created the object
     * @param conflict who holds the name, when it is not this ModelDeployment
     */
    public record Creation(boolean created, Optional<Ownership.Conflict> conflict) {}

    /** Creates the object; a name taken by this ModelDeployment's own object is a cache not caught up, not a conflict. */
    public Creation create(ModelDeployment md, HasMetadata desired) {
        try {
            client.resource(desired).create();
            return new Creation(true, Optional.empty());
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            return new Creation(false, holderOf(md, desired));
        }
    }

    /** Creates the object, or brings this ModelDeployment's own one in line with it. */
    public Optional<Ownership.Conflict> apply(ModelDeployment md, HasMetadata desired) {
        HasMetadata existing = client.resource(desired).get();
        if (existing == null) {
            return create(md, desired).conflict();
        }
        Optional<Ownership.Conflict> conflict =
                Ownership.conflict(existing, md.getMetadata().getUid());
        if (conflict.isEmpty()) {
            // only over the version whose owner was just checked: a change in between makes this a conflict, tried next
            // pass
            client.resource(desired)
                    .lockResourceVersion(existing.getMetadata().getResourceVersion())
                    .update();
        }
        return conflict;
    }

    /** What bringing one object back came to. */
    public enum Restored {
        NOTHING_TO_DO,
        RECREATED,
        PUT_BACK
    }

    /**
     * @param conflict who holds the name, when it is not this ModelDeployment; nothing is written then
     */
    public record Restoration(Restored what, Optional<Ownership.Conflict> conflict) {}

    /**
     * Brings this ModelDeployment's object back to {@code desired} when it is missing or {@code matches} says it differs,
     * as read from the API server now: a cache that has not caught up with the last write is no cause for another.
     */
    public Restoration restore(ModelDeployment md, HasMetadata desired, BiPredicate<HasMetadata, HasMetadata> matches) {
        HasMetadata existing = client.resource(desired).get();
        if (existing == null) {
            Creation creation = create(md, desired);
            return new Restoration(
                    creation.created() ? Restored.RECREATED : Restored.NOTHING_TO_DO, creation.conflict());
        }
        if (matches.test(desired, existing)) {
            return new Restoration(Restored.NOTHING_TO_DO, Optional.empty());
        }
        Optional<Ownership.Conflict> conflict =
                Ownership.conflict(existing, md.getMetadata().getUid());
        if (conflict.isPresent()) {
            return new Restoration(Restored.NOTHING_TO_DO, conflict);
        }
        try {
            client.resource(desired)
                    .lockResourceVersion(existing.getMetadata().getResourceVersion())
                    .update();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            // changed since it was read: the next pass reads it again
            return new Restoration(Restored.NOTHING_TO_DO, Optional.empty());
        }
        return new Restoration(Restored.PUT_BACK, Optional.empty());
    }

    /** Who holds the name now, if not this ModelDeployment; nothing when the name is free. */
    public Optional<Ownership.Conflict> holderOf(ModelDeployment md, HasMetadata desired) {
        HasMetadata existing = client.resource(desired).get();
        return existing == null
                ? Optional.empty()
                : Ownership.conflict(existing, md.getMetadata().getUid());
    }

    /**
     * Deletes exactly this object, and only when it is this ModelDeployment's (the UID is a precondition of the delete)
     * and this operator still leads: a Service or a Pod deleted on a decision made before a pause is traffic taken away.
     */
    public void delete(ModelDeployment md, HasMetadata existing) {
        if (!Ownership.ours(existing, md.getMetadata().getUid())) {
            LOG.infof(
                    "%s %s/%s is not %s's; it is left alone",
                    existing.getKind(),
                    existing.getMetadata().getNamespace(),
                    existing.getMetadata().getName(),
                    md.getMetadata().getName());
            return;
        }
        if (!lease.stillLeads(
                "deleting " + existing.getKind() + " " + existing.getMetadata().getNamespace() + "/"
                        + existing.getMetadata().getName())) {
            return;
        }
        String group = existing.getApiVersion().contains("/")
                ? "apis/" + existing.getApiVersion()
                : "api/" + existing.getApiVersion();
        String url = URLUtils.join(
                client.getMasterUrl().toString(),
                group,
                "namespaces",
                existing.getMetadata().getNamespace(),
                HasMetadata.getPlural(existing.getClass()),
                existing.getMetadata().getName());
        try {
            client.raw(
                    url,
                    "DELETE",
                    new DeleteOptionsBuilder()
                            .withNewPreconditions()
                            .withUid(existing.getMetadata().getUid())
                            .endPreconditions()
                            .build());
        } catch (KubernetesClientException e) {
            // the next pass sees what exists and decides again
            LOG.infof(
                    "delete of %s %s (uid %s) not done: %s",
                    existing.getKind(),
                    existing.getMetadata().getName(),
                    existing.getMetadata().getUid(),
                    e.getMessage());
        }
    }

    /** Deletes the object of this kind and name if it exists and is this ModelDeployment's. */
    public void deleteNamed(ModelDeployment md, Class<? extends HasMetadata> kind, String name) {
        HasMetadata existing = client.resources(kind)
                .inNamespace(md.getMetadata().getNamespace())
                .withName(name)
                .get();
        if (existing != null) {
            delete(md, existing);
        }
    }
}
