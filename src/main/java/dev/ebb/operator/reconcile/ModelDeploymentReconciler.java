package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.SpecResolver;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RouterStatus;
import dev.ebb.operator.config.ClusterPlatform;
import dev.ebb.operator.config.Controller;
import dev.ebb.operator.config.EbbConfig;
import dev.ebb.operator.observe.EventRecorder;
import dev.ebb.operator.observe.ReplicaGauges;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.render.RouterRenderer;
import dev.ebb.operator.render.RoutingProxy;
import dev.ebb.operator.retire.NextRetirement;
import dev.ebb.operator.retire.Reason;
import dev.ebb.operator.retire.RetirementRecord;
import dev.ebb.operator.retire.RetirementRecords;
import dev.ebb.operator.route.GatewayMembership;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * The one controller: checks the spec, asks the planner what to create, runs the retirement protocol for what the
 * spec takes away, and writes status. All decisions live in the pure classes it calls; this class only reads the
 * caches and talks to the API server.
 */
// generation-aware filtering would drop the retry annotation, which changes no generation; the filter keeps the rest
@ControllerConfiguration(
        name = Controller.NAME,
        generationAwareEventProcessing = false,
        informer = @Informer(onUpdateFilter = SpecOrRetryChanged.class))
// A failed pass is retried for as long as it fails, at most 15 s apart. The SDK's default gives up after five attempts
// and then waits for the next event or its ten-hour resync (EventProcessor.handleRetryOnException, java-operator-sdk
// v5.3.2), and a retirement waiting to prove a quiet replica idle has no next event: it would stall, withdrawn.
@GradualRetry(maxAttempts = -1, initialInterval = 1_000, intervalMultiplier = 2, maxInterval = 15_000)
// its RBAC is written out in src/main/kubernetes/kubernetes.yml, beside the Deployment it runs in
public class ModelDeploymentReconciler implements Reconciler<ModelDeployment>, Cleaner<ModelDeployment> {
    private static final Logger LOG = Logger.getLogger(ModelDeploymentReconciler.class);
    /** The Pod cache's index of router Pods by namespace and deployment. */
    private static final String ROUTER_PODS = "router-pods";
    /** The Pod cache's index of Pods by the node they run on. */
    private static final String PODS_BY_NODE = "pods-by-node";

    private static final Duration PODS_GONE_RECHECK = Duration.ofSeconds(5);
    private static final Duration PLATFORM_UNKNOWN_RECHECK = Duration.ofSeconds(5);
    /**
     * How soon a router that keeps its own list of engines is read again after it was told something, lists a serving
     * replica it should not lack, or has a Pod that could not be read.
     */
    static final Duration ROUTER_RECHECK = Duration.ofSeconds(5);

    static final String REASON_PLATFORM_UNKNOWN = "PlatformUnknown";
    private static final String ROUTER_OBJECTS = RouterRenderer.COMPONENT + "=" + RouterRenderer.COMPONENT_ROUTER;
    static final String REASON_RELEASED = "PartlyPlacedReplicaReleased";
    static final String REASON_HOOK_SCRIPT_RESTORED = "DrainHookScriptRestored";
    static final String REASON_ROUTER_REPAIRED = "RouterObjectRepaired";
    static final String REASON_ROUTER_IMAGES_CHANGED = "RouterImagesChanged";

    private final KubernetesClient client;
    private final EventRecorder events;
    private final SpecResolver resolver;
    private final RetirementRunner retirements;
    private final ReadLedger reads;
    private final CandidateReads candidateReads;
    private final Clock clock;
    private final RouterObjects routers;
    private final ClusterPlatform platform;
    private final ReplicaGauges gauges;
    private final Duration coolDown;
    private final int maxConcurrent;
    private final boolean chooseByLoad;
    private final OwnedObjects owned;
    private final PodRenderer renderer;
    /** Per ModelDeployment UID, its Pods already reported as deleted with a shorter grace, so each is told once. */
    private final Map<String, Set<String>> toldShortenedGraces = new ConcurrentHashMap<>();
    /** Per ModelDeployment UID, the partly scheduled replicas already told, by their waiting members. */
    private final Map<String, Set<String>> toldPartlyScheduled = new ConcurrentHashMap<>();
    /**
     * Per ModelDeployment UID, the replicas released for holding their nodes in part ({@link HeldBack#replicaKey}), and
     * until when their Pods are created held back. Kept until that time, as a Pod created meanwhile carries it itself.
     */
    private final Map<String, Map<String, Instant>> releasedReplicas = new ConcurrentHashMap<>();

    private final HookEndings hookEndings;
    private final RoleBudgets budgets;
    /** Per node going away, when this operator first saw it so; shared by every deployment with a Pod on it. */
    private final Map<String, Instant> nodesSeenGoing = new ConcurrentHashMap<>();

    public ModelDeploymentReconciler(
            KubernetesClient client,
            EventRecorder events,
            EbbConfig config,
            SpecResolver resolver,
            RetirementRunner retirements,
            ReadLedger reads,
            CandidateReads candidateReads,
            RouterObjects routers,
            OwnedObjects owned,
            ClusterPlatform platform,
            ReplicaGauges gauges,
            PodRenderer renderer,
            Clock clock) {
        this.renderer = renderer;
        this.hookEndings = new HookEndings(events);
        this.budgets = new RoleBudgets(owned);
        this.gauges = gauges;
        this.owned = owned;
        this.routers = routers;
        this.platform = platform;
        this.client = client;
        this.events = events;
        this.resolver = resolver;
        this.retirements = retirements;
        this.reads = reads;
        this.candidateReads = candidateReads;
        this.clock = clock;
        this.coolDown = config.retirement().coolDown();
        this.maxConcurrent = config.retirement().maxConcurrent();
        this.chooseByLoad = config.retirement().chooseByLoad();
    }

    @Override
    public List<EventSource<?, ModelDeployment>> prepareEventSources(EventSourceContext<ModelDeployment> context) {
        // every cache watches only the namespaces the controller does (ebb.watch-namespaces), which is all its RBAC
        // covers
        InformerEventSource<Pod, ModelDeployment> pods = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Pod.class, ModelDeployment.class)
                        .withNamespacesInheritedFromController()
                        .withLabelSelector(Labels.DEPLOYMENT)
                        .withOnUpdateFilter(hookEndings::observe)
                        .build(),
                context);
        pods.addIndexers(Map.of(
                ROUTER_PODS, ModelDeploymentReconciler::routerPodKey, PODS_BY_NODE, ModelDeploymentReconciler::nodeOf));
        // every node: a change in whether one is going away brings a pass of each deployment with a Pod on it. Nodes
        // have no namespace, so their cache must be the all-namespaces one: one kept per watched namespace would be
        // looked up under none and never found
        InformerEventSource<Node, ModelDeployment> nodes = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Node.class, ModelDeployment.class)
                        .withWatchAllNamespaces()
                        .withItemStore(new NodesLeaving.Store())
                        .withSecondaryToPrimaryMapper(node ->
                                pods.byIndex(PODS_BY_NODE, node.getMetadata().getName()).stream()
                                        .map(pod -> new ResourceID(
                                                pod.getMetadata().getLabels().get(Labels.DEPLOYMENT),
                                                pod.getMetadata().getNamespace()))
                                        .collect(Collectors.toSet()))
                        .withOnUpdateFilter(
                                (updated, old) -> !NodesLeaving.sign(updated).equals(NodesLeaving.sign(old)))
                        .build(),
                context);
        // every ConfigMap and PodDisruptionBudget of a deployment: the router's and the drain hook's, the router's and
        // the roles'
        List<EventSource<?, ModelDeployment>> sources = new ArrayList<>(List.of(
                pods,
                nodes,
                watched(Service.class, Labels.DEPLOYMENT, context),
                watched(ConfigMap.class, Labels.DEPLOYMENT, context),
                watched(PodDisruptionBudget.class, Labels.DEPLOYMENT, context)));
        // each of the router's objects, so that one deleted or edited by hand is seen and put back; the kinds above are
        // watched already
        RouterObjects.KINDS.stream()
                .filter(kind -> kind != Service.class && kind != ConfigMap.class && kind != PodDisruptionBudget.class)
                .forEach(kind -> sources.add(watched(kind, ROUTER_OBJECTS, context)));
        // Kubernetes copies a Service's labels onto its EndpointSlices, whose owner is the Service, not us
        sources.add(new InformerEventSource<>(
                InformerEventSourceConfiguration.from(EndpointSlice.class, ModelDeployment.class)
                        .withNamespacesInheritedFromController()
                        .withLabelSelector(Labels.DEPLOYMENT)
                        .withSecondaryToPrimaryMapper(slice -> Set.of(new ResourceID(
                                slice.getMetadata().getLabels().get(Labels.DEPLOYMENT),
                                slice.getMetadata().getNamespace())))
                        .build(),
                context));
        return List.copyOf(sources);
    }

    private static <R extends HasMetadata> InformerEventSource<R, ModelDeployment> watched(
            Class<R> kind, String selector, EventSourceContext<ModelDeployment> context) {
        return new InformerEventSource<>(
                InformerEventSourceConfiguration.from(kind, ModelDeployment.class)
                        .withNamespacesInheritedFromController()
                        .withLabelSelector(selector)
                        .build(),
                context);
    }

    @Override
    public UpdateControl<ModelDeployment> reconcile(ModelDeployment md, Context<ModelDeployment> context) {
        List<Condition> previous = previousConditions(md);
        long generation = Optional.ofNullable(md.getMetadata().getGeneration()).orElse(0L);
        Instant now = clock.instant();
        Set<Pod> pods = context.getSecondaryResources(Pod.class);
        List<Pod> routerPods = routerPods(md, context);
        tellShortenedGraces(md, pods);
        List<PartlyScheduled.Replica> partlyPlaced = PartlyScheduled.among(pods);
        tellPartlyScheduled(md, partlyPlaced);
        Inventory inventory = Inventory.of(pods);
        Resolution resolution = resolver.resolve(md);

        List<RetirementRecord> records = RetirementRecords.fromStatus(md.getStatus());
        List<NextRetirement.Abort> aborts = RetirementRecords.aborts(md.getStatus());
        NextRetirement.RetryPolicy retry =
                new NextRetirement.RetryPolicy(retryRequested(md), coolDown, generation, maxConcurrent);
        Optional<String> refreshToken = annotation(md, Annotations.REFRESH_HOOKS);

        ModelDeploymentStatus status;
        RetirementRunner.Pass pass;
        Optional<GatewayMembership.Plan> routing = Optional.empty();
        Optional<Duration> choosing = Optional.empty();
        PartlyScheduled.Verdict placement = new PartlyScheduled.Verdict(List.of(), Optional.empty());
        if (resolution instanceof Resolution.Accepted accepted) {
            Optional<DesiredDeployment> onThisCluster = onThisCluster(accepted.deployment());
            if (onThisCluster.isEmpty()) {
                events.warning(
                        md,
                        REASON_PLATFORM_UNKNOWN,
                        "the API server's version cannot be read; the routing proxy's form"
                                + " depends on it, so no Pod is rendered or changed until it can");
                return UpdateControl.<ModelDeployment>noUpdate().rescheduleAfter(PLATFORM_UNKNOWN_RECHECK);
            }
            DesiredDeployment deployment = onThisCluster.get();
            Map<String, String> hashes = hashes(deployment);
            Inventory seen = Inventory.of(PinnedDefaults.seenAtTheirRolesHash(pods, deployment, hashes, renderer));
            List<Ownership.Conflict> conflicts = new ArrayList<>();
            ReplicaPlanner.Retirements known = new ReplicaPlanner.Retirements(
                    NextRetirement.held(records, aborts),
                    NextRetirement.rollingOut(records),
                    NextRetirement.rolloutWaiting(aborts, retry, now),
                    chooseByLoad ? candidateReads.readings(md, seen, now) : Map.of(),
                    chooseByLoad,
                    HooksRefresh.requested(refreshToken, md.getStatus()),
                    nodesLeaving(pods, context, now),
                    now);
            ReplicaPlan plan = converge(md, deployment, hashes, seen, known, context, conflicts, now);
            RouterObjects.Outcome router = routers.converge(md, deployment, context, routerPods);
            router.repairs().forEach(repair -> events.warning(md, REASON_ROUTER_REPAIRED, repair.message()));
            router.imagesChange().ifPresent(change -> events.normal(md, REASON_ROUTER_IMAGES_CHANGED, change));
            conflicts.addAll(router.conflicts());
            pass = retirements.plan(
                    md,
                    seen,
                    pods,
                    plan.retirements(),
                    plan.later(),
                    retry,
                    context.getSecondaryResources(EndpointSlice.class),
                    routerPods,
                    now);
            routing = retirements.routerMembership(md, pods, routerPods, pass);
            Optional<Integer> unrouted =
                    routing.map(membership -> membership.unrouted().size());
            Optional<RouterStatus> routerStatus = router.status()
                    .map(s -> unrouted.map(s::withUnroutedReplicas).orElse(s));
            List<NextRetirement.Abort> kept =
                    NextRetirement.outstanding(pass.records(), aborts, plan.retirements(), plan.later(), generation);
            status = HooksRefresh.recorded(
                    StatusAggregator.accepted(
                            renderer,
                            generation,
                            deployment,
                            hashes,
                            seen,
                            routerStatus,
                            pass.statuses(),
                            RetirementRecords.toStatus(kept, coolDown),
                            conflicts,
                            previous,
                            now),
                    refreshToken,
                    md.getStatus());
            choosing = readCandidates(md, plan.awaitingReads(), pass, now);
            placement = PartlyScheduled.due(
                    partlyPlaced,
                    deployment.roles().stream()
                            .collect(Collectors.toMap(DesiredRole::name, DesiredRole::partialPlacement)),
                    releasedReplicas.getOrDefault(md.getMetadata().getUid(), Map.of()),
                    now);
        } else {
            candidateReads.forget(md.getMetadata().getUid());
            // with no valid spec nothing is taken away: a retirement in progress gives its replica back
            pass = retirements.plan(
                    md,
                    inventory,
                    pods,
                    List.of(),
                    List.of(),
                    retry,
                    context.getSecondaryResources(EndpointSlice.class),
                    routerPods,
                    now);
            status = HooksRefresh.kept(
                    StatusAggregator.rejected(
                            generation, (Resolution.Rejected) resolution, pass.statuses(), previous, now),
                    md.getStatus());
        }
        // the retirement's next state is on record before anything it decided is done, so a restart never repeats
        // or loses a step: a withdrawal, a restore or a deletion follows a status that already says so
        if (!Objects.equals(status, md.getStatus()) && !StatusWrite.recorded(md, status, context)) {
            LOG.infof(
                    "%s/%s changed while a pass decided on it; nothing the pass decided is done, and the next decides afresh",
                    md.getMetadata().getNamespace(), md.getMetadata().getName());
            return UpdateControl.<ModelDeployment>noUpdate().rescheduleAfter(RetirementRunner.PASS_INTERVAL);
        }
        gauges.record(md.getMetadata().getNamespace(), md.getMetadata().getName(), status.roles());
        for (StatusNews.News news : StatusNews.between(md.getStatus(), status)) {
            if (news.warning()) {
                events.warning(md, news.reason(), news.message());
            } else {
                events.normal(md, news.reason(), news.message());
            }
        }
        retirements.carryOut(md, pass, pods, routerPods);
        retirements.correctServingLabels(md, pods, routerPods, pass.records());
        retirements.keepRouterInStep(md, routerPods, routing);
        placement.release().forEach(release -> release(md, release, now));
        List<Pod> dueToLift = HeldBack.due(pods, now);
        dueToLift.forEach(this::lift);
        // what the router was told, or could not be asked, is looked at again soon: nothing else would bring a pass
        Optional<Duration> routerRecheck = routing.filter(r -> !r.nothingToSend()
                        || !r.unrouted().isEmpty()
                        || !r.unread().isEmpty())
                .map(r -> ROUTER_RECHECK);
        UpdateControl<ModelDeployment> control = UpdateControl.noUpdate();
        Optional<Duration> lookAgainIn = Stream.of(
                        pass.lookAgainIn(),
                        choosing,
                        routerRecheck,
                        placement.lookAgainIn(),
                        HeldBack.nextIn(pods, now),
                        Optional.of(RetirementRunner.PASS_INTERVAL).filter(interval -> !dueToLift.isEmpty()))
                .flatMap(Optional::stream)
                .min(Duration::compareTo);
        return lookAgainIn.map(control::rescheduleAfter).orElse(control);
    }

    /**
     * The surplus replicas the choice cannot rank yet are read once each; nothing starts until their readings are in,
     * and a wait longer than a pass is told. Retirements begun on a round of readings use it up.
     */
    private Optional<Duration> readCandidates(
            ModelDeployment md, List<ObservedReplica> awaiting, RetirementRunner.Pass pass, Instant now) {
        if (pass.began()) {
            candidateReads.forget(md.getMetadata().getUid());
        }
        if (awaiting.isEmpty()) {
            return Optional.empty();
        }
        CandidateReads.Waiting waiting = candidateReads.start(md, awaiting, now);
        if (waiting.tellNow()) {
            events.normal(md, CandidateReads.REASON_CHOOSING, waiting.message());
        }
        // reads land between passes without any event, so the pass that collects them is asked for
        return Optional.of(RetirementRunner.PASS_INTERVAL);
    }

    /** The retry annotation's value, when the user set one. */
    private static Optional<String> retryRequested(ModelDeployment md) {
        return annotation(md, Annotations.RETRY_RETIREMENT);
    }

    private static Optional<String> annotation(ModelDeployment md, String key) {
        return Optional.ofNullable(md.getMetadata().getAnnotations())
                .map(a -> a.get(key))
                .filter(token -> !token.isEmpty());
    }

    /**
     * The Pods of the deployment's router, by the labels its Deployment selects them with. They carry the deployment
     * label, so the Pod informer holds them, but they belong to the router's ReplicaSet, not to the deployment, so
     * they are looked up rather than handed over as secondary resources (which are the engine Pods). Through an index:
     * a scan of every cached Pod of the namespace, twice a pass, was a third of the operator's CPU at 2000 Pods.
     */
    private static List<Pod> routerPods(ModelDeployment md, Context<ModelDeployment> context) {
        InformerEventSource<Pod, ModelDeployment> cache = (InformerEventSource<Pod, ModelDeployment>)
                context.eventSourceRetriever().getEventSourceFor(Pod.class);
        return cache.byIndex(
                ROUTER_PODS,
                md.getMetadata().getNamespace() + "/" + md.getMetadata().getName());
    }

    /** The index key of a Pod bound to a node: the node's name. */
    static List<String> nodeOf(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getNodeName() == null
                ? List.of()
                : List.of(pod.getSpec().getNodeName());
    }

    /**
     * The nodes the deployment's Pods run on that are going away, read from the node cache, each with when this operator
     * first saw it going; a node seen back in service is forgotten, so that it counts afresh if it goes again.
     */
    private Map<String, NodesLeaving.Going> nodesLeaving(Set<Pod> pods, Context<ModelDeployment> context, Instant now) {
        InformerEventSource<Node, ModelDeployment> cache = (InformerEventSource<Node, ModelDeployment>)
                context.eventSourceRetriever().getEventSourceFor(Node.class);
        Map<String, NodesLeaving.Going> leaving = new HashMap<>();
        pods.stream().flatMap(pod -> nodeOf(pod).stream()).distinct().forEach(name -> {
            Optional<String> sign = cache.get(new ResourceID(name)).flatMap(NodesLeaving::sign);
            if (sign.isPresent()) {
                leaving.put(
                        name, new NodesLeaving.Going(sign.get(), nodesSeenGoing.computeIfAbsent(name, node -> now)));
            } else {
                nodesSeenGoing.remove(name);
            }
        });
        return leaving;
    }

    /** The index key of a router Pod (its namespace and deployment); none for any other Pod. */
    static List<String> routerPodKey(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        String deployment = labels == null ? null : labels.get(Labels.DEPLOYMENT);
        return deployment != null
                        && labels.entrySet()
                                .containsAll(RouterRenderer.labels(deployment).entrySet())
                ? List.of(pod.getMetadata().getNamespace() + "/" + deployment)
                : List.of();
    }

    /**
     * The deployment as this cluster runs it; empty while that depends on a version the API server has not told, since
     * Pods rendered on a guess would take a hash the known version later changes, and be turned over for it.
     */
    private Optional<DesiredDeployment> onThisCluster(DesiredDeployment deployment) {
        return RoutingProxy.frontsAnyRole(deployment)
                ? platform.current().map(deployment::on)
                : Optional.of(deployment);
    }

    private void tellShortenedGraces(ModelDeployment md, Set<Pod> pods) {
        tellOnce(
                toldShortenedGraces,
                md,
                ShortenedGraces.REASON,
                ShortenedGraces.among(pods).stream()
                        .collect(Collectors.toMap(
                                ShortenedGraces.Shortened::uid,
                                ShortenedGraces.Shortened::message,
                                (a, b) -> a,
                                LinkedHashMap::new)));
    }

    private void tellPartlyScheduled(ModelDeployment md, List<PartlyScheduled.Replica> partlyPlaced) {
        tellOnce(
                toldPartlyScheduled,
                md,
                PartlyScheduled.REASON,
                partlyPlaced.stream()
                        .collect(Collectors.toMap(
                                PartlyScheduled.Replica::key,
                                PartlyScheduled.Replica::message,
                                (a, b) -> a,
                                LinkedHashMap::new)));
    }

    /** A Warning for each notice not told yet; a notice that goes away is forgotten, so it is told again if it comes back. */
    private void tellOnce(
            Map<String, Set<String>> toldByDeployment, ModelDeployment md, String reason, Map<String, String> notices) {
        Set<String> told =
                toldByDeployment.computeIfAbsent(md.getMetadata().getUid(), uid -> ConcurrentHashMap.newKeySet());
        told.retainAll(notices.keySet());
        notices.forEach((key, message) -> {
            if (told.add(key)) {
                events.warning(md, reason, message);
            }
        });
    }

    private Map<String, String> hashes(DesiredDeployment deployment) {
        Map<String, String> hashes = new LinkedHashMap<>();
        for (DesiredRole role : deployment.roles()) {
            hashes.put(role.name(), renderer.configHash(deployment, role));
        }
        return hashes;
    }

    /**
     * Creates what the spec asks for and is missing, adding to the conflicts each name another owner holds; returns the
     * plan, whose retirements are the replicas the retirement protocol should take away.
     */
    private ReplicaPlan converge(
            ModelDeployment md,
            DesiredDeployment deployment,
            Map<String, String> hashes,
            Inventory inventory,
            ReplicaPlanner.Retirements retirements,
            Context<ModelDeployment> context,
            List<Ownership.Conflict> conflicts,
            Instant now) {
        Map<String, Service> services = context.getSecondaryResources(Service.class).stream()
                .collect(Collectors.toMap(s -> s.getMetadata().getName(), s -> s));
        ReplicaPlan plan = ReplicaPlanner.plan(renderer, deployment, hashes, inventory, services.keySet(), retirements);
        // the script first: the kubelet starts no hooked Pod before its ConfigMap is there
        convergeHookScripts(md, deployment, context).ifPresent(conflicts::add);

        plan.services()
                .forEach(desired -> applyService(
                                md, desired, services.get(desired.getMetadata().getName()))
                        .ifPresent(conflicts::add));
        plan.create()
                .forEach(pod -> createPod(md, heldBackIfReleased(md, pod, now)).ifPresent(conflicts::add));
        plan.neverRan().forEach(pod -> removeNeverRan(md, pod));
        plan.handedBack().forEach(handBack -> handBack(md, handBack));
        plan.obsoleteServices().forEach(name -> owned.delete(md, services.get(name)));
        conflicts.addAll(budgets.converge(
                md,
                deployment,
                context.getSecondaryResources(Pod.class),
                context.getSecondaryResources(PodDisruptionBudget.class)));
        return plan;
    }

    private Optional<Ownership.Conflict> convergeHookScripts(
            ModelDeployment md, DesiredDeployment deployment, Context<ModelDeployment> context) {
        boolean hooked = deployment.roles().stream()
                .anyMatch(role -> renderer.drainTimeline(deployment, role).hooked());
        HookScripts.Plan plan = HookScripts.plan(
                hooked ? Optional.of(renderer.hookConfigMap(deployment)) : Optional.empty(),
                context.getSecondaryResources(ConfigMap.class),
                context.getSecondaryResources(Pod.class));
        Optional<Ownership.Conflict> conflict = Optional.empty();
        if (plan.create().isPresent()) {
            OwnedObjects.Creation creation = owned.create(md, plan.create().get());
            conflict = creation.conflict();
            if (creation.created() && plan.restored()) {
                events.warning(
                        md,
                        REASON_HOOK_SCRIPT_RESTORED,
                        "put back " + plan.create().get().getMetadata().getName()
                                + ", the drain hook's script, which was deleted while Pods mount it; Pods already running keep the copy the"
                                + " kubelet mounted, and a hook that finds no script holds its Pod until its deadline");
            }
        }
        plan.delete().forEach(old -> owned.delete(md, old));
        return conflict;
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

    /**
     * A replica that has held its placed members longer than its role allows goes whole, and comes back held back as
     * long. It carries no request (the verdict leaves out any replica with a ready member), so it skips the
     * retirement protocol; each deletion is still fenced by the Lease.
     */
    private void release(ModelDeployment md, PartlyScheduled.Release release, Instant now) {
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
    private void lift(Pod pod) {
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

    /** The Pod as it is to be created: behind the gate while its replica is held back after a release. */
    private Pod heldBackIfReleased(ModelDeployment md, Pod pod, Instant now) {
        Map<String, Instant> released = releasedReplicas.get(md.getMetadata().getUid());
        if (released == null) {
            return pod;
        }
        released.values().removeIf(until -> !until.isAfter(now));
        return HeldBack.asCreated(pod, released, now);
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

    /**
     * The engine Pods go first, each draining through its own hook; the ModelDeployment stays, in phase Deleting,
     * until they are gone, because its Services and its router carry the streams they are finishing. Everything is
     * deleted explicitly rather than left to the garbage collector, so that this order holds.
     */
    @Override
    public DeleteControl cleanup(ModelDeployment md, Context<ModelDeployment> context) {
        Set<Pod> pods = context.getSecondaryResources(Pod.class);
        tellShortenedGraces(md, pods);
        if (!pods.isEmpty()) {
            pods.stream()
                    .filter(pod -> pod.getMetadata().getDeletionTimestamp() == null)
                    .forEach(pod -> owned.delete(md, pod));
            long generation =
                    Optional.ofNullable(md.getMetadata().getGeneration()).orElse(0L);
            ModelDeploymentStatus status =
                    StatusAggregator.deleting(md.getStatus(), generation, pods.size(), clock.instant());
            if (md.getStatus() == null
                    || !StatusAggregator.PHASE_DELETING.equals(md.getStatus().phase())) {
                events.normal(
                        md,
                        StatusAggregator.REASON_DELETING,
                        "deleting " + pods.size()
                                + " Pod(s); each finishes its requests through its own hook, then the router and the Services go");
            }
            if (!Objects.equals(status, md.getStatus())) {
                // refused when the ModelDeployment changed since this pass read it; the next pass writes afresh
                StatusWrite.recorded(md, status, context);
            }
            // Pod events bring the next pass sooner; this is the bound if one is missed
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(PODS_GONE_RECHECK);
        }
        reads.forget(md.getMetadata().getUid());
        candidateReads.forget(md.getMetadata().getUid());
        toldShortenedGraces.remove(md.getMetadata().getUid());
        toldPartlyScheduled.remove(md.getMetadata().getUid());
        releasedReplicas.remove(md.getMetadata().getUid());
        gauges.forget(md.getMetadata().getNamespace(), md.getMetadata().getName());
        context.getSecondaryResources(Service.class).forEach(service -> owned.delete(md, service));
        routers.remove(md);
        return DeleteControl.defaultDelete();
    }

    private static List<Condition> previousConditions(ModelDeployment md) {
        return md.getStatus() == null || md.getStatus().conditions() == null
                ? List.of()
                : md.getStatus().conditions();
    }
}
