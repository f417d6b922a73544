package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.MemberWork;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.retire.Classification;
import dev.ebb.operator.retire.Member;
import dev.ebb.operator.retire.Observation;
import dev.ebb.operator.retire.Retirement;
import dev.ebb.operator.route.GatewayMembership;
import dev.ebb.operator.route.RouterProbe;
import dev.ebb.operator.route.RouterView;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Builds what the retirement machine is shown in a pass from the informers' caches, the router's answers and the
 * member reads the {@link ReadLedger} collected: it changes nothing, and decides nothing.
 */
@ApplicationScoped
public class RetirementObserver {
    private final ReadLedger reads;
    private final RouterProbe router;

    public RetirementObserver(ReadLedger reads, RouterProbe router) {
        this.reads = reads;
        this.router = router;
    }

    /** What the machine is shown of a retirement under way, in this pass. */
    Observation observe(
            ModelDeployment md,
            Retirement current,
            Collection<Pod> pods,
            Collection<EndpointSlice> slices,
            Collection<Pod> routerPods,
            Instant now) {
        Map<String, Pod> byName =
                pods.stream().collect(Collectors.toMap(p -> p.getMetadata().getName(), p -> p, (a, b) -> a));
        Map<String, Observation.Present> present = new HashMap<>();
        for (Member member : current.targets()) {
            Pod pod = byName.get(member.name());
            if (pod != null) {
                present.put(
                        member.name(),
                        new Observation.Present(
                                pod.getMetadata().getUid(),
                                engineContainerId(pod),
                                pod.getMetadata().getDeletionTimestamp() != null));
            }
        }
        // past the deletion the withdrawal no longer matters, and nothing about it is claimed
        Observation.Withdrawal withdrawal = current.state().pastDeletion()
                ? new Observation.Withdrawal(
                        md.getSpec().router() != null, Set.of(), Optional.empty(), Optional.empty(), Map.of())
                : withdrawal(md, current, pods, slices, routerPods);
        Map<String, MemberWork> work = reads.collect(ReadLedger.Operation.of(md, current));
        Map<String, Reading> gauges = new HashMap<>();
        Map<String, ConnectionRead.Peers> connections = new HashMap<>();
        Map<String, Double> requests = new HashMap<>();
        work.forEach((member, read) -> {
            gauges.put(member, read.gauges());
            read.connections().ifPresent(peers -> connections.put(member, peers));
            read.requests().ifPresent(total -> requests.put(member, total));
        });
        return new Observation(now, present, withdrawal, gauges, connections, requests);
    }

    private Observation.Withdrawal withdrawal(
            ModelDeployment md,
            Retirement current,
            Collection<Pod> pods,
            Collection<EndpointSlice> slices,
            Collection<Pod> routerPods) {
        Map<String, String> reservedUids =
                current.targets().stream().collect(Collectors.toMap(Member::name, Member::uid));
        String service = Names.roleService(md.getMetadata().getName(), current.role());
        List<EndpointSlice> roleSlices = slices.stream()
                .filter(slice -> service.equals(labels(slice).get(Labels.SERVICE_NAME)))
                .toList();
        // a Service always has a slice, if an empty one: none known means the cache cannot say, not that nothing lists
        // the targets
        Optional<Boolean> endpointsClear = roleSlices.isEmpty()
                ? Optional.empty()
                : Optional.of(roleSlices.stream()
                        .flatMap(slice -> slice.getEndpoints() == null ? Stream.empty() : slice.getEndpoints().stream())
                        .noneMatch(endpoint -> endpoint.getTargetRef() != null
                                && reservedUids.containsKey(
                                        endpoint.getTargetRef().getName())));
        List<Pod> members = pods.stream()
                .filter(p -> p.getMetadata().getUid() != null
                        && p.getMetadata()
                                .getUid()
                                .equals(reservedUids.get(p.getMetadata().getName())))
                .toList();
        Set<String> stillServing = members.stream()
                .filter(p -> PodFacts.label(p, Labels.SERVING)
                        .filter(Labels.SERVING_NO::equals)
                        .isEmpty())
                .map(p -> p.getMetadata().getName())
                .collect(Collectors.toSet());
        boolean routed = md.getSpec().router() != null;
        RouterView view =
                routed ? router.view(md, routerPods, members) : RouterView.unavailable("the deployment has no router");
        return new Observation.Withdrawal(
                routed, stillServing, endpointsClear, view.selects(), view.dispatches(), view.unknownBecause());
    }

    /**
     * What the router has counted for the targets, read before their withdrawal is written (the machine withdraws
     * only once this record is persisted), so that a dispatch made after it can never hide in the baseline. Without a
     * router nothing is counted; a router that cannot be read gives none, and the machine waits for one.
     */
    Optional<Map<String, Double>> dispatchBaseline(
            ModelDeployment md, Collection<Pod> routerPods, List<Pod> members, Classification classification) {
        if (md.getSpec().router() == null
                || classification instanceof Classification.Refused
                || classification instanceof Classification.Unreachable) {
            return Optional.of(Map.of());
        }
        RouterView view = router.view(md, routerPods, members);
        return view.selects().isPresent() ? Optional.of(view.dispatches()) : Optional.empty();
    }

    /** A replica's Pods as a retirement binds them: by name and uid, with their engine container's identity now. */
    static List<Member> members(List<Pod> pods) {
        return pods.stream()
                .map(p -> new Member(p.getMetadata().getName(), p.getMetadata().getUid(), engineContainerId(p)))
                .toList();
    }

    /** The router's own lists of engines, for a router that keeps them; empty for one that follows the labels. */
    Optional<List<GatewayMembership.Listing>> workerLists(ModelDeployment md, Collection<Pod> routerPods) {
        return router.workerLists(md, routerPods);
    }

    private static String engineContainerId(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return null;
        }
        return pod.getStatus().getContainerStatuses().stream()
                .filter(c -> EnginePod.CONTAINER.equals(c.getName()))
                .map(c -> c.getContainerID())
                .filter(Objects::nonNull)
                .findFirst()
                .orElse(null);
    }

    private static Map<String, String> labels(HasMetadata resource) {
        return resource.getMetadata().getLabels() == null
                ? Map.of()
                : resource.getMetadata().getLabels();
    }
}
