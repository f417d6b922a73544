package dev.ebb.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import java.util.List;
import java.util.Map;

/**
 * What the reconciler should do about replicas and Services this pass. The only Pods it removes are those of surplus
 * replicas that never ran; every other removal belongs to the retirement protocol, and until it runs, surplus
 * replicas that ran are only counted.
 *
 * @param create Pods to create, in order
 * @param services every Service that should exist, to create or bring up to date
 * @param obsoleteServices names of owned Services nothing needs any more
 * @param neverRan Pods of surplus replicas none of whose containers ever started: they hold no work and go directly
 * @param surplus per role, replicas that exist beyond the spec and are retained
 */
public record ReplicaPlan(List<Pod> create, List<Service> services, List<String> obsoleteServices, List<Pod> neverRan,
        Map<String, Integer> surplus) {
}
