package dev.ebb.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import java.util.List;
import java.util.Map;

/**
 * What the reconciler should do about replicas and Services this pass. Nothing here deletes a Pod: removals of
 * replicas belong to the retirement protocol, and until it runs, surplus replicas are only counted.
 *
 * @param create Pods to create, in order
 * @param services every Service that should exist, to create or bring up to date
 * @param obsoleteServices names of owned Services nothing needs any more
 * @param surplus per role, replicas that exist beyond the spec and are retained
 */
public record ReplicaPlan(List<Pod> create, List<Service> services, List<String> obsoleteServices, Map<String, Integer> surplus) {
}
