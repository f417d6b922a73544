package dev.ebb.operator.soak;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RetirementStatus;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import dev.ebb.operator.sim.EveryState;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The soak's invariants, watched as the world changes and checked again at the end. Every ModelDeployment status the
 * API server stores is seen (an informer of its own), so each retirement's states are known as they were written; every
 * Pod deletion is seen too, and one the soak did not make is the operator's, which must have been preceded by a
 * retirement of that very Pod (by uid) that reached Deleting, or be of a Pod whose containers never started.
 */
final class Invariants implements AutoCloseable {
    static final Duration CHECK_EVERY = Duration.ofMillis(200);
    /** How long a deletion waits for the status that announced it to arrive over the other watch. */
    private static final Duration STATUS_LAG = Duration.ofSeconds(5);

    private static final Set<String> DELETING = Set.of("Deleting", "Settling");

    private record Reached(String deployment, Set<String> states) {}

    private record Deletion(String uid, String pod, String deployment, Instant at, boolean everRan) {}

    /** What one retirement did, from the first status that listed it to the last. */
    private static final class Retirement {
        final Set<String> states = ConcurrentHashMap.newKeySet();
        volatile boolean listed = true;
    }

    private final KubernetesClient client;
    private final String namespace;
    private final Instant origin;
    private final List<Violation> violations = new CopyOnWriteArrayList<>();
    private final Set<String> seenViolations = ConcurrentHashMap.newKeySet();
    private final Set<String> outsideDeletions = ConcurrentHashMap.newKeySet();
    private final Map<String, Reached> retiredUids = new ConcurrentHashMap<>();
    private final Map<String, Retirement> retirements = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Deletion> pending = new ConcurrentLinkedQueue<>();
    private final Set<String> deletionsSeen = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService checker =
            Executors.newSingleThreadScheduledExecutor(dev.ebb.operator.sim.DaemonThreads.named("soak-checker"));
    private final SharedIndexInformer<ModelDeployment> deployments;
    private final SharedIndexInformer<Pod> pods;
    private volatile long operatorDeletions;
    private volatile long neverRanDeletions;
    private volatile long ticks;
    private final java.util.function.Consumer<String> say;
    private volatile java.util.function.Supplier<List<Sent>> sent = List::of;
    private volatile java.util.function.Supplier<List<Disruption>> disruptions = List::of;
    private final Set<Sent> judgedCuts = ConcurrentHashMap.newKeySet();

    Invariants(KubernetesClient client, String namespace, Instant origin, java.util.function.Consumer<String> say) {
        this.client = client;
        this.namespace = namespace;
        this.origin = origin;
        this.say = say;
        this.deployments =
                client.resources(ModelDeployment.class).inNamespace(namespace).inform(EveryState.of(this::observe));
        this.pods = client.pods()
                .inNamespace(namespace)
                .withLabel(Labels.REPLICA)
                .inform(new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Pod pod) {
                        deletionOf(pod);
                    }

                    @Override
                    public void onUpdate(Pod old, Pod pod) {
                        deletionOf(pod);
                    }

                    @Override
                    public void onDelete(Pod pod, boolean unknown) {
                        deletionOf(pod);
                    }
                });
        checker.scheduleWithFixedDelay(
                this::tick, CHECK_EVERY.toMillis(), CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The soak is about to delete or evict this Pod: whatever follows is not the operator's doing. */
    void outsideDeletion(String uid) {
        outsideDeletions.add(uid);
    }

    List<Violation> violations() {
        return List.copyOf(violations);
    }

    long operatorDeletions() {
        return operatorDeletions;
    }

    long neverRanDeletions() {
        return neverRanDeletions;
    }

    /** Retirements by how they went: started, completed (deleted), aborted, called off (gone without either). */
    Map<String, Long> retirementCounts() {
        long completed = retirements.values().stream()
                .filter(r -> !r.listed && r.states.stream().anyMatch(DELETING::contains))
                .count();
        long aborted = retirements.values().stream()
                .filter(r -> r.states.contains("Aborted"))
                .count();
        long calledOff = retirements.values().stream()
                .filter(r -> !r.listed
                        && !r.states.contains("Aborted")
                        && r.states.stream().noneMatch(DELETING::contains))
                .count();
        return Map.of(
                "started",
                (long) retirements.size(),
                "completed",
                completed,
                "aborted",
                aborted,
                "called off",
                calledOff);
    }

    /** The requests to judge as their cuts come in, and the outside disruptions that may explain them. */
    void watchCuts(
            java.util.function.Supplier<List<Sent>> requests, java.util.function.Supplier<List<Disruption>> outside) {
        this.disruptions = outside;
        this.sent = requests;
    }

    void violation(String invariant, String what) {
        if (seenViolations.add(invariant + what)) {
            violations.add(new Violation(Instant.now(), invariant, what));
            say.accept("VIOLATION [" + invariant + "] " + what);
        }
    }

    /**
     * Judges every cut that ended before {@code upTo} and was not judged yet (a deletion is recorded once the API
     * server has taken it, a moment after the kubelet may act on it); an unexplained one is a violation.
     */
    List<CutJudge.Verdict> judgeCuts(Instant upTo) {
        List<CutJudge.Verdict> verdicts = new ArrayList<>();
        for (Sent s : sent.get()) {
            if (s.request().outcome() == dev.ebb.operator.sim.LoadGenerator.Outcome.CUT
                    && s.request().end().isBefore(upTo)
                    && judgedCuts.add(s)) {
                CutJudge.Verdict v = CutJudge.judge(s, disruptions.get(), origin);
                verdicts.add(v);
                if (!v.explained()) {
                    violation("generation cut", v.why());
                }
            }
        }
        return verdicts;
    }

    private void observe(ModelDeployment md) {
        String name = md.getMetadata().getName();
        List<RetirementStatus> listed = Optional.ofNullable(md.getStatus())
                .map(ModelDeploymentStatus::retirements)
                .orElse(List.of());
        Set<String> keys = ConcurrentHashMap.newKeySet();
        for (RetirementStatus r : listed) {
            String key = name + "/" + r.roleName() + "/r" + r.replicaOrdinal() + "@" + r.startedAt();
            keys.add(key);
            Retirement retirement = retirements.computeIfAbsent(key, k -> new Retirement());
            retirement.listed = true;
            if ("Aborted".equals(r.state()) && retirement.states.add("Aborted")) {
                // not a violation (an abort keeps everything), but what made it is worth reading
                say.accept("retirement " + key + " aborted: " + r.reason() + " " + r.message());
            }
            Optional.ofNullable(r.state()).ifPresent(retirement.states::add);
            for (RetirementStatus.TargetMember member :
                    Optional.ofNullable(r.targetMembers()).orElse(List.of())) {
                if (!member.name().startsWith(name + "-")) {
                    violation(
                            "ownership",
                            name + "'s retirement " + key + " names " + member.name() + ", which is not its Pod");
                }
                Reached reached = retiredUids.computeIfAbsent(
                        member.uid(), uid -> new Reached(name, ConcurrentHashMap.newKeySet()));
                if (!reached.deployment().equals(name)) {
                    violation(
                            "ownership",
                            member.name() + " (" + member.uid() + ") is retired by both " + reached.deployment()
                                    + " and " + name);
                }
                Optional.ofNullable(r.state()).ifPresent(reached.states()::add);
            }
        }
        retirements.forEach((key, r) -> {
            if (key.startsWith(name + "/") && !keys.contains(key)) {
                r.listed = false;
            }
        });
    }

    private void deletionOf(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() == null
                && pods.getStore().getByKey(namespace + "/" + pod.getMetadata().getName()) != null) {
            return;
        }
        String uid = pod.getMetadata().getUid();
        if (!deletionsSeen.add(uid)) {
            return;
        }
        boolean everRan = pod.getStatus() != null
                && pod.getStatus().getContainerStatuses() != null
                && pod.getStatus().getContainerStatuses().stream()
                        .anyMatch(c -> Boolean.TRUE.equals(c.getStarted()) || c.getContainerID() != null);
        pending.add(new Deletion(
                uid,
                pod.getMetadata().getName(),
                pod.getMetadata().getLabels().get(Labels.DEPLOYMENT),
                Instant.now(),
                everRan));
    }

    private void tick() {
        try {
            ticks++;
            judgeDeletions(Instant.now().minus(STATUS_LAG));
            if (ticks % 5 == 0) {
                judgeCuts(Instant.now().minus(STATUS_LAG));
            }
            pods.getStore().list().forEach(this::checkOwnership);
            if (ticks % 25 == 0) {
                Stream.<List<? extends HasMetadata>>of(
                                client.services()
                                        .inNamespace(namespace)
                                        .withLabel(Labels.DEPLOYMENT)
                                        .list()
                                        .getItems(),
                                client.apps()
                                        .deployments()
                                        .inNamespace(namespace)
                                        .withLabel(Labels.DEPLOYMENT)
                                        .list()
                                        .getItems(),
                                client.configMaps()
                                        .inNamespace(namespace)
                                        .withLabel(Labels.DEPLOYMENT)
                                        .list()
                                        .getItems())
                        .flatMap(List::stream)
                        .forEach(this::checkOwnership);
            }
        } catch (RuntimeException e) {
            // a list refused by an injected fault; the next tick looks again
        }
    }

    /** Deletions seen before {@code upTo} are judged; later ones wait for the status that should have come first. */
    void judgeDeletions(Instant upTo) {
        while (pending.peek() != null && pending.peek().at().isBefore(upTo)) {
            Deletion d = pending.poll();
            if (outsideDeletions.contains(d.uid())) {
                continue;
            }
            operatorDeletions++;
            Reached reached = retiredUids.get(d.uid());
            if (reached != null && reached.states().stream().anyMatch(DELETING::contains)) {
                if (!Objects.equals(reached.deployment(), d.deployment())) {
                    violation(
                            "ownership",
                            d.pod() + " of " + d.deployment() + " was deleted by " + reached.deployment()
                                    + "'s retirement");
                }
                continue;
            }
            if (!d.everRan()) {
                neverRanDeletions++;
                continue;
            }
            violation(
                    "deleted without proof of idleness",
                    String.format(
                            java.util.Locale.ROOT,
                            "%s (uid %s) of %s was deleted at %s by the operator; %s",
                            d.pod(),
                            d.uid(),
                            d.deployment(),
                            CutJudge.at(d.at(), origin),
                            reached == null
                                    ? "no retirement ever named it"
                                    : "its retirement only reached " + reached.states()));
        }
    }

    private void checkOwnership(HasMetadata object) {
        String deployment = Optional.ofNullable(object.getMetadata().getLabels())
                .map(l -> l.get(Labels.DEPLOYMENT))
                .orElse(null);
        List<OwnerReference> controllers =
                Optional.ofNullable(object.getMetadata().getOwnerReferences()).orElse(List.of()).stream()
                        .filter(o -> Boolean.TRUE.equals(o.getController()))
                        .toList();
        String what = object.getKind() + " " + object.getMetadata().getName();
        if (controllers.size() != 1
                || !"ModelDeployment".equals(controllers.get(0).getKind())) {
            violation(
                    "ownership",
                    what + " has controllers "
                            + controllers.stream()
                                    .map(o -> o.getKind() + "/" + o.getName())
                                    .toList());
            return;
        }
        OwnerReference owner = controllers.get(0);
        if (!owner.getName().equals(deployment)
                || !object.getMetadata().getName().startsWith(owner.getName() + "-")) {
            violation("ownership", what + " is labelled for " + deployment + " and owned by " + owner.getName());
        }
        ModelDeployment md = deployments.getStore().getByKey(namespace + "/" + owner.getName());
        if (md != null && !md.getMetadata().getUid().equals(owner.getUid())) {
            violation(
                    "ownership",
                    what + " names owner uid " + owner.getUid() + ", not " + owner.getName() + "'s "
                            + md.getMetadata().getUid());
        }
    }

    /** What keeps each ModelDeployment from its spec now; empty when all have converged. */
    List<String> unconverged() {
        List<String> problems = new ArrayList<>();
        for (ModelDeployment md : deployments.getStore().list()) {
            String name = md.getMetadata().getName();
            ModelDeploymentStatus status = md.getStatus();
            if (status == null) {
                problems.add(name + ": no status");
                continue;
            }
            if (!Objects.equals(status.observedGeneration(), md.getMetadata().getGeneration())) {
                problems.add(name + ": status observed generation " + status.observedGeneration() + " of "
                        + md.getMetadata().getGeneration());
            }
            Optional.ofNullable(status.retirements()).orElse(List.of()).stream()
                    .filter(r -> !"Aborted".equals(r.state()))
                    .forEach(r -> problems.add(name + ": retirement of " + r.roleName() + " r" + r.replicaOrdinal()
                            + " still " + r.state() + (r.holdReason() == null ? "" : " (" + r.holdReason() + ")")));
            Optional.ofNullable(status.abortedRetirements())
                    .orElse(List.of())
                    .forEach(a -> problems.add(name + ": aborted retirement left " + a));
            List<Pod> live = pods.getStore().list().stream()
                    .filter(p -> name.equals(p.getMetadata().getLabels().get(Labels.DEPLOYMENT)))
                    .toList();
            for (RoleSpec role : md.getSpec().roles()) {
                int size = role.size() == null ? 1 : role.size();
                int want = (role.replicas() == null ? 1 : role.replicas()) * size;
                List<Pod> ofRole = live.stream()
                        .filter(p ->
                                role.name().equals(p.getMetadata().getLabels().get(Labels.ROLE)))
                        .toList();
                long ready = ofRole.stream()
                        .filter(p -> p.getMetadata().getDeletionTimestamp() == null && isReady(p))
                        .count();
                Set<String> hashes = ConcurrentHashMap.newKeySet();
                ofRole.forEach(p ->
                        hashes.add(String.valueOf(p.getMetadata().getLabels().get(Labels.CONFIG_HASH))));
                if (ofRole.size() != want || ready != want || hashes.size() > 1) {
                    problems.add(String.format(
                            java.util.Locale.ROOT,
                            "%s/%s: %d Pods (%d ready) of %d wanted, config hashes %s",
                            name,
                            role.name(),
                            ofRole.size(),
                            ready,
                            want,
                            hashes));
                }
                Optional<RoleStatus> reported = Optional.ofNullable(status.roles()).orElse(List.of()).stream()
                        .filter(r -> r.name().equals(role.name()))
                        .findFirst();
                if (reported.isEmpty()
                        || reported.get().updated() != want / size
                        || reported.get().ready() != want / size) {
                    problems.add(name + "/" + role.name() + ": status says "
                            + reported.map(r -> r.updated() + " updated, " + r.ready() + " ready")
                                    .orElse("nothing") + " of " + want / size + " replicas");
                }
                ofRole.stream()
                        .filter(p -> Labels.SERVING_NO.equals(
                                p.getMetadata().getLabels().get(Labels.SERVING)))
                        .forEach(p -> problems.add(
                                name + ": " + p.getMetadata().getName() + " left withdrawn (serving=false)"));
            }
        }
        return problems;
    }

    private static boolean isReady(Pod pod) {
        return pod.getStatus() != null
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    @Override
    public void close() {
        checker.shutdownNow();
        deployments.close();
        pods.close();
    }
}
