package dev.ebb.operator.reconcile;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Whether a node is going away, from the signs maintenance leaves on it before it evicts anything: a cordon
 * ({@code kubectl drain} and node upgrades set spec.unschedulable first), the cluster autoscaler's taint on a node it
 * is removing, Karpenter's on a node it disrupts. The autoscaler's DeletionCandidate taint only says a node may go
 * later, so it is not a sign. Pure.
 */
public final class NodesLeaving {
    /** cluster-autoscaler, utils/taints/taints.go: set on a node it has chosen to remove, before it drains it. */
    static final String AUTOSCALER_TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler";
    /** Karpenter v1, pkg/apis/v1/taints.go: set on a node it is disrupting, before it drains it. */
    static final String KARPENTER_DISRUPTED = "karpenter.sh/disrupted";

    private NodesLeaving() {}

    /**
     * A node going away, as the operator saw it.
     *
     * @param sign what marks it, in words for an Event
     * @param since when this operator first saw the sign: a drain waits on a moving replica for at most its role's drain
     *     budget from then. Not the taint's own time, which may be days old on a node cordoned long ago; an operator
     *     restarted meanwhile counts afresh, so the wait can only grow, never cut short
     */
    public record Going(String sign, Instant since) {}

    /** What marks the node as going away, in words for an Event; empty while it is not. */
    public static Optional<String> sign(Node node) {
        if (node.getSpec() == null) {
            return Optional.empty();
        }
        if (Boolean.TRUE.equals(node.getSpec().getUnschedulable())) {
            return Optional.of("cordoned");
        }
        List<Taint> taints =
                node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
        if (taints.stream().anyMatch(t -> AUTOSCALER_TO_BE_DELETED.equals(t.getKey()))) {
            return Optional.of("marked for removal by the cluster autoscaler");
        }
        if (taints.stream().anyMatch(t -> KARPENTER_DISRUPTED.equals(t.getKey()))) {
            return Optional.of("being disrupted by Karpenter");
        }
        return Optional.empty();
    }

    /**
     * What of a Node the operator keeps: its name, identity and version, and the fields its signs are read from. A
     * Node's status (images, conditions, addresses, capacity) is most of its size, and a cluster has thousands.
     */
    static Node signsOnly(Node node) {
        NodeBuilder kept = new NodeBuilder()
                .withNewMetadata()
                .withName(node.getMetadata().getName())
                .withUid(node.getMetadata().getUid())
                .withResourceVersion(node.getMetadata().getResourceVersion())
                .endMetadata();
        return node.getSpec() == null
                ? kept.build()
                : kept.withNewSpec()
                        .withUnschedulable(node.getSpec().getUnschedulable())
                        .withTaints(node.getSpec().getTaints())
                        .endSpec()
                        .build();
    }

    /** The Node cache's store: it holds each Node as {@link #signsOnly} leaves it. */
    public static final class Store extends BasicItemStore<Node> {
        public Store() {
            super(Cache::metaNamespaceKeyFunc);
        }

        @Override
        public Node put(String key, Node node) {
            return super.put(key, signsOnly(node));
        }
    }
}
