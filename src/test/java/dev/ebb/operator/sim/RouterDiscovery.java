package dev.ebb.operator.sim;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What each released router's discovery does with one change to a Pod it watches, and what smg's periodic
 * reconcile does with a full list. Pure: Pods in, decisions out.
 *
 * <p>The test world feeds every router from one informer on the deployment's Pods, whatever the labels say. vLLM's
 * router and smg watch with a server-side label selector instead, so the API server reports a Pod entering the
 * selector as ADDED and one leaving it as DELETED; {@link #asSelectorWatchSees} translates.
 */
final class RouterDiscovery {
    enum Event {
        ADDED,
        MODIFIED,
        DELETED
    }

    enum Decision {
        /** The router routes to the Pod from now on (again). */
        ROUTE,
        /** The router stops routing to the Pod. */
        DROP,
        /** Nothing changes. */
        NONE
    }

    private RouterDiscovery() {}

    /**
     * @param before the Pod as the router last saw it, null on creation
     * @param after the Pod now, null once it is gone from the API
     * @param known whether the router routes to the Pod now (smg: whether its discovery tracks it)
     */
    static Decision onEvent(RouterKind kind, Map<String, String> selector, Pod before, Pod after, boolean known) {
        return switch (kind) {
            case LLM_D_ROUTER -> llmD(selector, before, after);
            case VLLM_ROUTER ->
                asSelectorWatchSees(selector, before, after)
                        .map(event -> vllm(event, after, known))
                        .orElse(Decision.NONE);
            case SGLANG_GATEWAY ->
                asSelectorWatchSees(selector, before, after)
                        .map(event -> smg(event, after, known))
                        .orElse(Decision.NONE);
        };
    }

    /**
     * llm-d-router v0.10.0 pkg/epp/controller/pod_reconciler.go: every event on a Pod whose old or new labels match
     * the pool is reconciled; a Pod gone, not ready (pkg/epp/util/pod/pod.go, IsPodReady: no deletion timestamp
     * and condition Ready=True) or no longer matching is deleted from the datastore at once.
     */
    private static Decision llmD(Map<String, String> selector, Pod before, Pod after) {
        if (!matches(selector, before) && !matches(selector, after)) {
            return Decision.NONE;
        }
        if (after == null
                || !llmDReady(after)
                || !matches(selector, after)
                || address(after).isEmpty()) {
            return Decision.DROP;
        }
        return Decision.ROUTE;
    }

    /**
     * production-stack vllm-stack-0.1.12 src/vllm_router/service_discovery.py, K8sPodIPServiceDiscovery
     * _watch_engines and _on_engine_update: DELETED drops the engine; ready means every container ready and no
     * deletion timestamp; ADDED adds a ready Pod with an IP; MODIFIED adds a ready one and drops a known one that
     * is not, but a Pod without an IP is ignored either way.
     */
    private static Decision vllm(Event event, Pod after, boolean known) {
        if (event == Event.DELETED) {
            return known ? Decision.DROP : Decision.NONE;
        }
        if (address(after).isEmpty()) {
            return Decision.NONE;
        }
        boolean ready = allContainersReady(after) && after.getMetadata().getDeletionTimestamp() == null;
        if (ready) {
            return Decision.ROUTE;
        }
        return event == Event.MODIFIED && known ? Decision.DROP : Decision.NONE;
    }

    /**
     * smg v1.9.0 model_gateway/src/service_discovery.rs, start_service_discovery: the watcher's applied_objects()
     * never yields a deletion; a Pod with a deletion timestamp is removed if tracked (handle_pod_deletion); any other
     * is added when healthy (condition Ready=True and phase Running, PodInfo::is_healthy) and not yet tracked
     * (handle_pod_event). Nothing here drops a Pod that turned NotReady or left the selector: only the periodic
     * reconcile sees that it left.
     */
    private static Decision smg(Event event, Pod after, boolean tracked) {
        if (event == Event.DELETED
                || address(after).isEmpty()
                || after.getMetadata().getUid() == null) {
            return Decision.NONE;
        }
        if (after.getMetadata().getDeletionTimestamp() != null) {
            return tracked ? Decision.DROP : Decision.NONE;
        }
        return smgHealthy(after) && !tracked ? Decision.ROUTE : Decision.NONE;
    }

    /** smg's reconcile decisions, by Pod name. */
    record Reconciled(Set<String> stale, Set<String> missing) {}

    /**
     * smg v1.9.0 model_gateway/src/service_discovery.rs, reconcile_pods with build_live_pod_set and
     * compute_reconciliation_diff: live = listed Pods matching the selector without a deletion timestamp, whatever
     * their health; a tracked Pod not live is stale, a healthy live Pod not tracked is missing. Identity is name and
     * uid.
     */
    static Reconciled smgReconcile(
            Map<String, String> selector, Map<String, String> trackedUidByName, List<Pod> listed) {
        Map<String, Pod> live = listed.stream()
                .filter(p -> matches(selector, p) && p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> p.getMetadata().getUid() != null && address(p).isPresent())
                .collect(Collectors.toMap(p -> p.getMetadata().getName(), p -> p, (a, b) -> a));
        Set<String> stale = trackedUidByName.entrySet().stream()
                .filter(t -> !Optional.ofNullable(live.get(t.getKey()))
                        .map(p -> p.getMetadata().getUid())
                        .orElse("")
                        .equals(t.getValue()))
                .map(Map.Entry::getKey)
                .collect(Collectors.toSet());
        Set<String> missing = live.values().stream()
                .filter(p -> !p.getMetadata()
                        .getUid()
                        .equals(trackedUidByName.get(p.getMetadata().getName())))
                .filter(RouterDiscovery::smgHealthy)
                .map(p -> p.getMetadata().getName())
                .collect(Collectors.toSet());
        return new Reconciled(stale, missing);
    }

    /**
     * The event a watch with the router's label selector would get: the API server reports a Pod that starts
     * matching as ADDED and one that stops as DELETED; changes outside the selector are never sent.
     */
    static Optional<Event> asSelectorWatchSees(Map<String, String> selector, Pod before, Pod after) {
        boolean was = matches(selector, before);
        boolean is = matches(selector, after);
        if (was && is) {
            return Optional.of(Event.MODIFIED);
        }
        if (is) {
            return Optional.of(Event.ADDED);
        }
        return was ? Optional.of(Event.DELETED) : Optional.empty();
    }

    static boolean matches(Map<String, String> selector, Pod pod) {
        return pod != null && SimEndpoints.selects(selector, pod.getMetadata().getLabels());
    }

    static Optional<String> address(Pod pod) {
        return Optional.ofNullable(pod).map(Pod::getStatus).map(s -> s.getPodIP());
    }

    private static boolean llmDReady(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null && readyCondition(pod);
    }

    private static boolean smgHealthy(Pod pod) {
        return readyCondition(pod) && "Running".equals(pod.getStatus().getPhase());
    }

    private static boolean readyCondition(Pod pod) {
        List<PodCondition> conditions =
                Optional.ofNullable(pod.getStatus()).map(s -> s.getConditions()).orElse(List.of());
        return conditions.stream()
                .filter(c -> "Ready".equals(c.getType()))
                .findFirst()
                .map(c -> "True".equals(c.getStatus()))
                .orElse(false);
    }

    /** production-stack's _check_pod_ready: no statuses at all is not ready. */
    private static boolean allContainersReady(Pod pod) {
        List<ContainerStatus> statuses = Optional.ofNullable(pod.getStatus())
                .map(s -> s.getContainerStatuses())
                .orElse(List.of());
        return !statuses.isEmpty() && statuses.stream().allMatch(s -> Boolean.TRUE.equals(s.getReady()));
    }
}
