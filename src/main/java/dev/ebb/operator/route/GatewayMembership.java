package dev.ebb.operator.route;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What each of SGLang's gateway Pods must be told, on every pass, so that it routes to exactly the replicas that
 * serve: the gateway follows a withdrawal only at its 60 s relist, and never takes back by itself a worker removed
 * before that relist ({@link SglangWorkerApi}). So whatever took a replica out of service (a retirement, a member of
 * its replica leaving, an operator stopped between two writes), its workers are removed from every gateway Pod that
 * lists them, and a serving, ready leader that a gateway Pod does not list is added back there. Pure.
 */
public final class GatewayMembership {
    private GatewayMembership() {}

    /**
     * One gateway Pod's list of workers, as read in this pass.
     *
     * @param workers empty when the list could not be read: nothing is decided for that Pod
     */
    public record Listing(String gatewayPod, Optional<List<RouterAnswers.SglangWorker>> workers) {}

    /**
     * @param remove per gateway Pod, the ids of workers whose Pod no longer serves
     * @param add per gateway Pod, the urls of serving, ready leaders it does not list
     * @param unrouted the serving, ready leaders some readable gateway Pod does not list, by Pod name
     * @param unread the gateway Pods whose list could not be read
     */
    public record Plan(
            Map<String, List<String>> remove,
            Map<String, List<String>> add,
            Set<String> unrouted,
            List<String> unread) {
        public boolean nothingToSend() {
            return remove.values().stream().allMatch(List::isEmpty)
                    && add.values().stream().allMatch(List::isEmpty);
        }
    }

    /** @param enginePods the deployment's engine Pods, as the caches hold them */
    public static Plan decide(List<Listing> listings, Collection<Pod> enginePods) {
        Map<String, String> routable = new LinkedHashMap<>();
        Map<String, String> routableNames = new LinkedHashMap<>();
        List<String> leaving = new ArrayList<>();
        for (Pod pod : enginePods) {
            Optional<String> host =
                    Optional.ofNullable(pod.getStatus()).map(s -> s.getPodIP()).flatMap(RouterAnswers::normalHost);
            if (host.isEmpty()) {
                continue;
            }
            if (!serving(pod) || pod.getMetadata().getDeletionTimestamp() != null) {
                leaving.add(host.get());
            } else {
                workerUrl(pod).ifPresent(url -> {
                    routable.put(host.get(), url);
                    routableNames.put(host.get(), pod.getMetadata().getName());
                });
            }
        }
        Map<String, List<String>> remove = new LinkedHashMap<>();
        Map<String, List<String>> add = new LinkedHashMap<>();
        Set<String> unrouted = new TreeSet<>();
        List<String> unread = new ArrayList<>();
        for (Listing listing : listings) {
            if (listing.workers().isEmpty()) {
                unread.add(listing.gatewayPod());
                continue;
            }
            List<RouterAnswers.SglangWorker> listed = listing.workers().get();
            remove.put(listing.gatewayPod(), RouterAnswers.sglangWorkersToRemove(listed, leaving));
            List<String> missing = RouterAnswers.sglangWorkersToAdd(listed, routable);
            add.put(listing.gatewayPod(), missing);
            routable.forEach((host, url) -> {
                if (missing.contains(url)) {
                    unrouted.add(routableNames.get(host));
                }
            });
        }
        return new Plan(remove, add, unrouted, List.copyOf(unread));
    }

    /**
     * The url a Pod is a worker under, when it is one the gateway's own discovery would add: the leader of a Server
     * replica (the gateway's selector names member index 0), ready, with an address and an engine port. A worker the
     * operator adds has no type, which is what a Server one is; a prefill or decode replica is never withdrawn.
     */
    static Optional<String> workerUrl(Pod pod) {
        boolean worker = label(pod, Labels.MEMBER_INDEX)
                        .filter(Labels.LEADER_INDEX::equals)
                        .isPresent()
                && label(pod, Labels.ROLE_KIND)
                        .filter(RoleKind.Server.wireName()::equals)
                        .isPresent()
                && Readiness.isPodReady(pod);
        Optional<String> host =
                Optional.ofNullable(pod.getStatus()).map(s -> s.getPodIP()).flatMap(RouterAnswers::normalHost);
        Optional<Integer> port = enginePort(pod);
        return worker && host.isPresent() && port.isPresent()
                ? Optional.of(workerUrl(host.get(), port.get()))
                : Optional.empty();
    }

    private static boolean serving(Pod pod) {
        return label(pod, Labels.SERVING).filter(Labels.SERVING_YES::equals).isPresent();
    }

    private static Optional<String> label(Pod pod, String key) {
        return Optional.ofNullable(pod.getMetadata().getLabels())
                .map(labels -> labels.get(key))
                .filter(Objects::nonNull);
    }

    /** The url the gateway's discovery registers a Pod under, {@code http://<Pod IP>:<engine port>}. */
    private static String workerUrl(String host, int port) {
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    private static Optional<Integer> enginePort(Pod member) {
        return Optional.ofNullable(member.getSpec()).map(spec -> spec.getContainers()).stream()
                .flatMap(List::stream)
                .filter(c -> EnginePod.CONTAINER.equals(c.getName()))
                .findFirst()
                .flatMap(c -> Optional.ofNullable(c.getPorts()).stream()
                        .flatMap(List::stream)
                        .findFirst())
                .map(ContainerPort::getContainerPort);
    }
}
