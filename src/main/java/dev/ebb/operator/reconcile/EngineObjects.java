package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.observe.EventRecorder;
import dev.ebb.operator.retire.Reason;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Writes the engine's Services and Pods as the reconciler decided: creates and brings up to date the Services, creates
 * the Pods, removes the replicas that go without the retirement protocol, and removes everything at deletion. Each Pod
 * and Service is written only where it is the ModelDeployment's own ({@link OwnedObjects}), and each removal is told.
 */
@ApplicationScoped
public class EngineObjects {
    private static final Logger LOG = Logger.getLogger(EngineObjects.class);
    static final String REASON_RELEASED = "PartlyPlacedReplicaReleased";

    private final KubernetesClient client;
    private final OwnedObjects owned;
    private final EventRecorder events;
    /**
     * Per ModelDeployment UID, the replicas released for holding their nodes in part ({@link HeldBack#replicaKey}), and
     * until when their Pods are created held back. Kept until that time, as a Pod created meanwhile carries it itself.
     */
    private final Map<String, Map<String, Instant>> releasedReplicas = new ConcurrentHashMap<>();

    public EngineObjects(KubernetesClient client, OwnedObjects owned, EventRecorder events) {
        this.client = client;
        this.owned = owned;
        this.events = events;
    }

    /**
     * Does what the plan says of Services and Pods, in its order: Services, new Pods, replicas that never ran, replicas
     * handed back, Services nothing needs.
     *
     * @param services the deployment's Services as cached, by name
     * @return the names another owner holds
     */
    List<Ownership.Conflict> converge(
            ModelDeployment md, ReplicaPlan plan, Map<String, Service> services, Instant now) {
        List<Ownership.Conflict> conflicts = new ArrayList<>();
        plan.services()
                .forEach(desired -> applyService(
                                md, desired, services.get(desired.getMetadata().getName()))
                        .ifPresent(conflicts::add));
        plan.create()
                .forEach(pod -> createPod(md, heldBackIfReleased(md, pod, now)).ifPresent(conflicts::add));
        plan.neverRan().forEach(pod -> removeNeverRan(md, pod));
        plan.handedBack().forEach(handBack -> handBack(md, handBack));
        plan.obsoleteServices().forEach(name -> owned.delete(md, services.get(name)));
        return conflicts;
    }

    private Optional<Ownership.Conflict> applyService(ModelDeployment md, Service desired, Service existing) {
        if (existing == null) {
            return owned.create(md, desired).conflict();
        }
        Optional<Ownership.Conflict> conflict =
                Ownership.conflict(existing, md.getMetadata().getUid());
        if (conflict.isEmpty()
                && (!Objects.equals(
                                existing.getSpec().getSelector(),
                                desired.getSpec().getSelector())
                        || !Objects.equals(
                                existing.getSpec().getPorts(), desired.getSpec().getPorts()))) {
            client.services()
                    .resource(existing)
                    .edit(s -> new ServiceBuilder(s)
                            .editSpec()
                            .withSelector(desired.getSpec().getSelector())
                            .withPorts(desired.getSpec().getPorts())
                            .endSpec()
                            .build());
        }
        return conflict;
    }

    private Optional<Ownership.Conflict> createPod(ModelDeployment md, Pod pod) {
        OwnedObjects.Creation creation = owned.create(md, pod);
        if (creation.created()) {
            events.normal(
                    md,
                    "PodCreated",
                    "created " + pod.getMetadata().getName() + " at configuration "
                            + pod.getMetadata().getLabels().get(Labels.CONFIG_HASH));
        }
        return creation.conflict();
    }

    /** The Pod as it is to be created: behind the gate while its replica is held back after a release. */
    private Pod heldBackIfReleased(ModelDeployment md, Pod pod, Instant now) {
        Map<String, Instant> released = releasedReplicas.get(md.getMetadata().getUid());
        if (released == null) {
            return pod;
        }
        released.values().removeIf(until -> !until.isAfter(now));
        return HeldBack.asCreated(pod, released, now);
    }

    /** The deployment's replicas released for holding their nodes in part, by replica, with until when. */
    Map<String, Instant> released(ModelDeployment md) {
        return releasedReplicas.getOrDefault(md.getMetadata().getUid(), Map.of());
    }

    /**
     * A replica that has held its placed members longer than its role allows goes whole, and comes back held back as
     * long. It carries no request (the verdict leaves out any replica with a ready member), so it skips the
     * retirement protocol; each deletion is still fenced by the Lease.
     */
    void release(ModelDeployment md, PartlyScheduled.Release release, Instant now) {
        releasedReplicas
                .computeIfAbsent(md.getMetadata().getUid(), uid -> new ConcurrentHashMap<>())
                .put(
                        HeldBack.replicaKey(
                                release.replica().role(), release.replica().ordinal()),
                        now.plus(release.bound()));
        events.warning(md, REASON_RELEASED, release.message());
        release.replica().members().forEach(pod -> owned.delete(md, pod));
    }

    /** Lets the scheduler have a held-back Pod; one that cannot be edited now is tried again on the next pass. */
    void lift(Pod pod) {
        try {
            client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .edit(HeldBack::lifted);
        } catch (KubernetesClientException e) {
            LOG.infof(
                    "could not let the scheduler have %s/%s yet: %s",
                    pod.getMetadata().getNamespace(), pod.getMetadata().getName(), e.getMessage());
        }
    }

    /**
     * A replica whose node's drain has waited its role's drain budget goes as the drain would take it: deleted with its
     * grace, its drain hook holding each member while it carries requests. Each deletion is fenced by the Lease.
     */
    private void handBack(ModelDeployment md, ReplicaPlan.HandBack handBack) {
        events.warning(md, Reason.HANDED_BACK.wire(), handBack.message());
        handBack.replica().members().forEach(pod -> owned.delete(md, pod));
    }

    /** A replica that never ran holds no request, so it skips the retirement protocol. */
    private void removeNeverRan(ModelDeployment md, Pod pod) {
        owned.delete(md, pod);
        events.normal(
                md,
                "NeverRanReplicaRemoved",
                "deleted " + pod.getMetadata().getName()
                        + " without retiring it: its replica leaves, and none of its containers ever started");
    }

    /** Deletes each Pod not already being deleted; each drains through its own hook. */
    void removePods(ModelDeployment md, Collection<Pod> pods) {
        pods.stream()
                .filter(pod -> pod.getMetadata().getDeletionTimestamp() == null)
                .forEach(pod -> owned.delete(md, pod));
    }

    /** Deletes the deployment's Services and forgets what was kept about it. */
    void remove(ModelDeployment md, Collection<Service> services) {
        releasedReplicas.remove(md.getMetadata().getUid());
        services.forEach(service -> owned.delete(md, service));
    }
}
