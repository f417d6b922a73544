package dev.ebb.operator.sim;

import java.net.URI;

/**
 * One endpoint a fake router holds.
 *
 * @param pod the Pod's name
 * @param uid the Pod's uid when the router took it
 * @param base where its engine listens
 * @param workerId smg's worker id; null for the routers that have none
 * @param addedEpochSeconds when the router last added it
 * @param draining smg keeps a worker it is removing, unroutable, for its drain settle
 */
record RoutedEndpoint(String pod, String uid, URI base, String workerId, long addedEpochSeconds, boolean draining) {
    RoutedEndpoint drained() {
        return new RoutedEndpoint(pod, uid, base, workerId, addedEpochSeconds, true);
    }
}
