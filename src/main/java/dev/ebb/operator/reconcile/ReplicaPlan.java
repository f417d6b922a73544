package dev.ebb.operator.reconcile;

import dev.ebb.operator.retire.NextRetirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import java.util.List;

/**
 * What the reconciler should do about replicas and Services this pass. The only Pods it removes directly are those of
 * surplus replicas that never ran; every other removal goes through the retirement protocol.
 *
 * @param create Pods to create, in order
 * @param services every Service that should exist, to create or bring up to date
 * @param obsoleteServices names of owned Services nothing needs any more
 * @param neverRan Pods of surplus replicas none of whose containers ever started: they hold no work and go directly
 * @param retirements every replica to retire now, in the order they go, dropped roles first: those the spec takes
 *     away that ran, and per role being rolled out the replica at an older configuration whose turn it is
 * @param later replicas at an older configuration whose rollout turn is still to come
 * @param awaitingReads surplus replicas whose choice waits for one read of each; none of them leaves before then
 * @param handedBack replicas on a node going away whose role's drain budget has run out since the node was seen going
 *     before their turn to move came: deleted with their grace, as the node's drain would
 */
public record ReplicaPlan(
        List<Pod> create,
        List<Service> services,
        List<String> obsoleteServices,
        List<Pod> neverRan,
        List<NextRetirement.Candidate> retirements,
        List<NextRetirement.Replica> later,
        List<ObservedReplica> awaitingReads,
        List<HandBack> handedBack) {

    /** A replica given to a node's drain without a move, and why. */
    public record HandBack(ObservedReplica replica, String message) {}
}
