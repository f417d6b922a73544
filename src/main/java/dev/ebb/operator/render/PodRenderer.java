package dev.ebb.operator.render;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RoleTemplate;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.drain.DrainTimeline;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.drain.EngineShutdown;
import dev.ebb.operator.drain.FollowerGauges;
import dev.ebb.operator.drain.InFlightGauges;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ExecAction;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Turns one member slot into its Pod. Pure and deterministic: the same slot always renders byte-identical Pods,
 * which is what lets the config hash stand for "what would be rendered today". A bean so that it is injected where
 * used; it holds no client, clock or I/O, and tests build it with {@code new}.
 */
@ApplicationScoped
public class PodRenderer {
    public static final String METRICS_PATH = "/metrics";
    public static final String PORT_NAME = "http";
    private static final int HASH_HEX_LENGTH = 10;
    private static final ObjectMapper CANONICAL_JSON = JsonMapper.builder()
            .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .build();
    /** Stands in the hash for an engine image the operator chose, so that a new default turns no replica over. */
    private static final String OPERATOR_DEFAULT_IMAGE = "operator-default";
    /** The startup probe asks as often as the readiness probe, so a loaded engine is found ready as soon. */
    private static final int PROBE_PERIOD_SECONDS = 5;

    static final String KUEUE_QUEUE = "kueue.x-k8s.io/queue-name";
    static final String KUEUE_POD_GROUP = "kueue.x-k8s.io/pod-group-name";
    static final String KUEUE_POD_GROUP_SIZE = "kueue.x-k8s.io/pod-group-total-count";
    static final String KUEUE_POD_GROUP_SERVING = "kueue.x-k8s.io/pod-group-serving";

    /** The engine container's volume of the hook's ConfigMap. */
    public static final String DRAIN_HOOK_VOLUME = RoleTemplate.DRAIN_HOOK_VOLUME;

    private final DrainTimelines timelines;
    private final String hookScript;
    private final String hookRevision;

    public PodRenderer() {
        this(new DrainTimelines());
    }

    @Inject
    public PodRenderer(DrainTimelines timelines) {
        this(timelines, DrainHook.SCRIPT);
    }

    /**
     * What an operator release whose drain hook reads {@code hookScript} renders; releases that differ only in the hook
     * differ only in this.
     */
    public PodRenderer(DrainTimelines timelines, String hookScript) {
        this.timelines = timelines;
        this.hookScript = hookScript;
        this.hookRevision = DrainHook.revisionOf(hookScript);
    }

    /**
     * The hash of what a role renders, taken over the members of its first replica with the hash itself left out.
     * Other replicas differ from it only by their ordinal, so any edit that changes one of them changes this.
     */
    public String configHash(DesiredDeployment deployment, DesiredRole role) {
        return hashOf(IntStream.range(0, role.size())
                .mapToObj(member -> renderWithoutHash(new MemberSlot(deployment, role, 0, member)))
                .toList());
    }

    /**
     * For a role that names its image, the hash it would have had it taken that image as the operator's default: a
     * replica created so runs what the role asks for. Empty for a role that takes the default.
     */
    public Optional<String> configHashOnDefault(DesiredDeployment deployment, DesiredRole role) {
        return role.defaultImage() ? Optional.empty() : Optional.of(configHash(deployment, role.onDefaultImage()));
    }

    /**
     * The hash of a replica's rendered members. What the operator chose rather than the spec is left out: the drain
     * hook's text, a default engine image, the engine's own drain it sized for that image and the routing proxy's
     * image. A new operator release that changes only those must not turn over every replica (reloading every
     * model); the user decides when (see {@link #hookOutdated}, {@link #imageOutdated}).
     */
    static String hashOf(List<Pod> rendered) {
        List<Pod> firstReplica =
                rendered.stream().map(PodRenderer::withoutOperatorChoices).toList();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(CANONICAL_JSON.writeValueAsBytes(firstReplica));
            return HexFormat.of().formatHex(digest).substring(0, HASH_HEX_LENGTH);
        } catch (JsonProcessingException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot hash a rendered Pod", e);
        }
    }

    public Pod render(MemberSlot slot, String configHash) {
        Pod pod = renderWithoutHash(slot);
        pod.getMetadata().getLabels().put(Labels.CONFIG_HASH, configHash);
        if (hooked(pod)) {
            pod.getMetadata().getAnnotations().put(Annotations.HOOK_REVISION, hookRevision);
        }
        return pod;
    }

    /** Whether the Pod's engine container drains through the operator's hook. */
    public static boolean hooked(Pod pod) {
        return engineContainer(pod)
                .map(c -> c.getLifecycle() != null
                        && c.getLifecycle().getPreStop() != null
                        && c.getLifecycle().getPreStop().getExec() != null)
                .orElse(false);
    }

    /**
     * Whether the Pod carries another hook than this operator renders: an older release's or one of unknown age, or one
     * that reads elsewhere (a follower of a release whose follower hooks read their own, engine-less loopback; a member
     * of a replica whose followers count requests of their own, from a release whose hooks read one engine).
     */
    public boolean hookOutdated(Pod pod, DesiredDeployment deployment) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        if (!hooked(pod)) {
            return false;
        }
        boolean otherScript = annotations == null || !hookRevision.equals(annotations.get(Annotations.HOOK_REVISION));
        Container engine = engineContainer(pod).orElseThrow();
        List<String> hook = engine.getLifecycle().getPreStop().getExec().getCommand();
        return otherScript
                || !Optional.of(DrainHook.hosts(hook))
                        .equals(hookHostsOf(pod, deployment.engine(), engine.getCommand()));
    }

    /**
     * Where a member's hook reads the gauges of the engines that speak for its replica, summed. A follower counts no
     * request of its own (SGLang's node ranks above 0 serve a small health server whose page carries only what their
     * own schedulers record, nothing under tensor or pipeline parallelism; vLLM's followers run --headless), and it
     * must not stop before its leader is idle: a multi-node engine's collective spans every member, and a follower
     * stops at once on SIGTERM (no handler on SGLang's ranks above 0 at v0.5.4, while at v0.5.23 they wait for rank
     * 0's shutdown broadcast; vLLM's run_headless raises SystemExit, vllm/entrypoints/cli/serve.py at upstream
     * 2fd893b4c), which fails the leader's engine and every generation it holds. So a follower's hook reads its
     * leader, by the leader's stable name, which the replica's headless Service publishes even while the leader is not
     * ready. Where followers count requests of their own ({@link FollowerGauges}), every member's hook reads its own
     * engine and every other member.
     */
    static List<String> hookHosts(MemberSlot slot) {
        boolean everyMember = FollowerGauges.onFollowers(
                        slot.deployment().engine(),
                        slot.role().size(),
                        slot.role().extraArgs())
                .isPresent();
        return hookHosts(
                slot.deployment().owner().name(),
                slot.role().name(),
                slot.ordinal(),
                slot.member(),
                slot.role().size(),
                everyMember);
    }

    private static List<String> hookHosts(
            String deployment, String role, int ordinal, int member, int size, boolean everyMember) {
        if (!everyMember) {
            return List.of(member == 0 ? EnginePod.LOOPBACK : MemberSlot.memberHost(deployment, role, ordinal, 0));
        }
        List<String> hosts = new ArrayList<>(List.of(EnginePod.LOOPBACK));
        IntStream.range(0, size)
                .filter(other -> other != member)
                .forEach(other -> hosts.add(MemberSlot.memberHost(deployment, role, ordinal, other)));
        return List.copyOf(hosts);
    }

    /**
     * {@link #hookHosts} as a Pod's own labels, size and command give its slot; empty for a Pod that lacks them. A leader
     * with no labels reads its own engine.
     */
    private static Optional<List<String>> hookHostsOf(Pod pod, Engine engine, List<String> command) {
        Map<String, String> labels =
                Optional.ofNullable(pod.getMetadata().getLabels()).orElse(Map.of());
        Map<String, String> annotations =
                Optional.ofNullable(pod.getMetadata().getAnnotations()).orElse(Map.of());
        Optional<Integer> member = Labels.number(labels.getOrDefault(Labels.MEMBER_INDEX, Labels.LEADER_INDEX));
        Optional<Integer> size = Labels.number(annotations.get(Annotations.REPLICA_SIZE));
        Optional<Integer> ordinal = Labels.number(labels.get(Labels.REPLICA));
        boolean everyMember = size.isPresent()
                && command != null
                && FollowerGauges.onFollowers(engine, size.get(), command).isPresent();
        if (member.isEmpty()) {
            return Optional.empty();
        }
        if (member.get() == 0 && !everyMember) {
            return Optional.of(List.of(EnginePod.LOOPBACK));
        }
        if (labels.get(Labels.DEPLOYMENT) == null || labels.get(Labels.ROLE) == null || ordinal.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(hookHosts(
                labels.get(Labels.DEPLOYMENT),
                labels.get(Labels.ROLE),
                ordinal.get(),
                member.get(),
                size.orElse(1),
                everyMember));
    }

    /**
     * Whether the Pod runs another default engine image than the operator now has for its role, or another routing
     * proxy image, as the Pod itself recorded them. Only a role that still takes the default engine image can be
     * behind on it; one that names an image is rolled out by its config hash when the image changes.
     */
    public boolean imageOutdated(Pod pod, DesiredDeployment deployment, DesiredRole role) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        if (annotations == null) {
            return false;
        }
        String createdWith = annotations.get(Annotations.DEFAULT_IMAGE);
        String proxyCreatedWith = annotations.get(Annotations.ROUTING_PROXY_IMAGE);
        boolean engineBehind = role.defaultImage() && createdWith != null && !createdWith.equals(role.image());
        boolean proxyBehind = proxyCreatedWith != null
                && !deployment
                        .router()
                        .map(r -> r.images().routingProxy())
                        .filter(proxyCreatedWith::equals)
                        .isPresent();
        return engineBehind || proxyBehind;
    }

    private static Optional<Container> engineContainer(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getContainers() == null
                ? Optional.empty()
                : pod.getSpec().getContainers().stream()
                        .filter(c -> EnginePod.CONTAINER.equals(c.getName()))
                        .findFirst();
    }

    private static Pod withoutOperatorChoices(Pod pod) {
        Pod copy = new PodBuilder(pod).build();
        if (hooked(copy)) {
            Container engine = engineContainer(copy).orElseThrow();
            ExecAction exec = engine.getLifecycle().getPreStop().getExec();
            exec.setCommand(DrainHook.withoutOperatorChoices(exec.getCommand()));
            // where the script comes from is the operator's choice: releases that carried it in the command had no
            // volume
            if (engine.getVolumeMounts() != null
                    && engine.getVolumeMounts().removeIf(m -> DRAIN_HOOK_VOLUME.equals(m.getName()))
                    && engine.getVolumeMounts().isEmpty()) {
                engine.setVolumeMounts(null);
            }
            if (copy.getSpec().getVolumes() != null
                    && copy.getSpec().getVolumes().removeIf(v -> DRAIN_HOOK_VOLUME.equals(v.getName()))
                    && copy.getSpec().getVolumes().isEmpty()) {
                copy.getSpec().setVolumes(null);
            }
        }
        Map<String, String> annotations = copy.getMetadata().getAnnotations();
        if (annotations != null && annotations.remove(Annotations.DEFAULT_IMAGE) != null) {
            engineContainer(copy).orElseThrow().setImage(OPERATOR_DEFAULT_IMAGE);
        }
        if (annotations != null && annotations.remove(Annotations.ENGINE_SHUTDOWN) != null) {
            Container engine = engineContainer(copy).orElseThrow();
            engine.setCommand(withoutFlag(engine.getCommand(), EngineShutdown.VLLM_FLAG));
        }
        if (annotations != null && annotations.remove(Annotations.DEFAULT_SHARED_MEMORY) != null) {
            copy.getSpec().getVolumes().removeIf(v -> RoleTemplate.SHARED_MEMORY_VOLUME.equals(v.getName()));
            if (copy.getSpec().getVolumes().isEmpty()) {
                copy.getSpec().setVolumes(null);
            }
            engineContainer(copy)
                    .orElseThrow()
                    .getVolumeMounts()
                    .removeIf(m -> RoleTemplate.SHARED_MEMORY_VOLUME.equals(m.getName()));
        }
        if (annotations != null && annotations.remove(Annotations.DEFAULT_STARTUP_SECONDS) != null) {
            engineContainer(copy).orElseThrow().setStartupProbe(null);
        }
        if (annotations != null && annotations.remove(Annotations.ROUTING_PROXY_IMAGE) != null) {
            RoutingProxy.in(copy).ifPresent(c -> c.setImage(OPERATOR_DEFAULT_IMAGE));
        }
        return copy;
    }

    /** The command line without the first {@code flag value} pair. */
    private static List<String> withoutFlag(List<String> command, String flag) {
        int at = command.indexOf(flag);
        if (at < 0 || at + 1 >= command.size()) {
            return command;
        }
        List<String> without = new ArrayList<>(command.subList(0, at));
        without.addAll(command.subList(at + 2, command.size()));
        return without;
    }

    private Pod renderWithoutHash(MemberSlot slot) {
        DesiredDeployment deployment = slot.deployment();
        DesiredRole role = slot.role();
        EngineProfile profile = EngineProfile.of(deployment.engine());
        boolean operatorBuilt = !role.takeOver();
        DrainTimeline timeline = drainTimeline(deployment, role);
        List<String> command = operatorBuilt ? profile.command(slot, timeline) : role.command();
        boolean tls = operatorBuilt && usesAny(command, profile.tlsFlags());
        int enginePort = RoutingProxy.enginePort(slot);

        ContainerBuilder main = new ContainerBuilder()
                .withName(EnginePod.CONTAINER)
                .withImage(role.image())
                .withCommand(command)
                .addNewPort()
                .withName(PORT_NAME)
                .withContainerPort(enginePort)
                .withProtocol("TCP")
                .endPort()
                .withEnv(role.env());
        role.resources().ifPresent(main::withResources);
        RoleTemplate.EngineContainerTemplate engineTemplate = role.template().engineContainer();
        if (engineTemplate != null) {
            main.withEnvFrom(engineTemplate.envFrom())
                    .withVolumeMounts(engineTemplate.volumeMounts())
                    .withSecurityContext(engineTemplate.securityContext());
        }
        role.sharedMemory()
                .value()
                .ifPresent(size -> main.addNewVolumeMount()
                        .withName(RoleTemplate.SHARED_MEMORY_VOLUME)
                        .withMountPath(RoleTemplate.SHARED_MEMORY_PATH)
                        .endVolumeMount());
        if (operatorBuilt && slot.leader()) {
            main.withReadinessProbe(readiness(profile, enginePort, tls));
            role.startupSeconds()
                    .value()
                    .ifPresent(seconds -> main.withStartupProbe(startup(profile, enginePort, tls, seconds)));
            role.livenessSeconds()
                    .ifPresent(seconds ->
                            main.withLivenessProbe(healthCheck(profile, enginePort, tls, failuresWithin(seconds))));
        }
        if (timeline.hooked()) {
            main.withNewLifecycle()
                    .withNewPreStop()
                    .withNewExec()
                    .withCommand(DrainHook.command(
                            timeline,
                            tls ? "https" : "http",
                            hookHosts(slot),
                            enginePort,
                            METRICS_PATH,
                            InFlightGauges.of(deployment.engine())))
                    .endExec()
                    .endPreStop()
                    .endLifecycle();
            main.addNewVolumeMount()
                    .withName(DRAIN_HOOK_VOLUME)
                    .withMountPath(DrainHook.MOUNT_PATH)
                    .withReadOnly(true)
                    .endVolumeMount();
        }

        RoleTemplate.PodTemplate podTemplate = Optional.ofNullable(
                        role.template().pod())
                .orElseGet(
                        () -> new RoleTemplate.PodTemplate(null, null, null, null, null, null, null, null, null, null));
        return new PodBuilder()
                .withNewMetadata()
                .withName(slot.podName())
                .withNamespace(deployment.owner().namespace())
                .withLabels(withTemplates(podTemplate, RoleTemplate.Metadata::labels, labels(slot)))
                .withAnnotations(withTemplates(
                        podTemplate,
                        RoleTemplate.Metadata::annotations,
                        annotations(slot, enginePort, tls, operatorBuilt, timeline)))
                .withOwnerReferences(ownerReference(deployment.owner()))
                .endMetadata()
                .withNewSpec()
                .withServiceAccountName(podTemplate.serviceAccountName())
                .withImagePullSecrets(podTemplate.imagePullSecrets())
                .withAffinity(podTemplate.affinity())
                .withTopologySpreadConstraints(podTemplate.topologySpreadConstraints())
                .withPriorityClassName(podTemplate.priorityClassName())
                .withRuntimeClassName(podTemplate.runtimeClassName())
                .withSchedulerName(podTemplate.schedulerName())
                .withSecurityContext(podTemplate.securityContext())
                .withVolumes(volumes(
                        podTemplate,
                        role,
                        timeline.hooked() ? Optional.of(hookConfigMapName(deployment)) : Optional.empty()))
                .withHostname(role.size() > 1 ? slot.podName() : null)
                .withSubdomain(
                        role.size() > 1 ? Names.replica(deployment.owner().name(), role.name(), slot.ordinal()) : null)
                // A Service named like the engine would inject e.g. VLLM_PORT, which vLLM reads as its own setting.
                .withEnableServiceLinks(false)
                .withTerminationGracePeriodSeconds(
                        timeline.grace().map(Integer::longValue).orElse(null))
                .withNodeSelector(role.nodeSelector().isEmpty() ? null : role.nodeSelector())
                .withTolerations(role.tolerations())
                .withInitContainers(
                        RoutingProxy.fronts(slot) && deployment.platform().nativeSidecars()
                                ? List.of(RoutingProxy.container(slot, deployment.platform()))
                                : List.of())
                .withContainers(
                        RoutingProxy.fronts(slot) && !deployment.platform().nativeSidecars()
                                ? List.of(main.build(), RoutingProxy.container(slot, deployment.platform()))
                                : List.of(main.build()))
                .endSpec()
                .build();
    }

    public DrainTimeline drainTimeline(DesiredDeployment deployment, DesiredRole role) {
        return timelines.of(
                role.grace(),
                deployment.engine(),
                role.kind(),
                role.takeOver(),
                RoutingProxy.fronts(deployment, role) && !deployment.platform().nativeSidecars(),
                EngineShutdown.operatorSizes(deployment.engine(), role.image(), role.extraArgs()));
    }

    /** The template's labels or annotations with the operator's own over them: these the Pod must carry as rendered. */
    private static Map<String, String> withTemplates(
            RoleTemplate.PodTemplate template,
            Function<RoleTemplate.Metadata, Map<String, String>> part,
            Map<String, String> operators) {
        Map<String, String> merged = new LinkedHashMap<>();
        Optional.ofNullable(template.metadata()).map(part).ifPresent(merged::putAll);
        merged.putAll(operators);
        return merged;
    }

    /**
     * The template's volumes; where the role has shared memory, the memory-backed one mounted at /dev/shm; where it is
     * hooked, the hook's ConfigMap, which the kubelet must mount before the engine starts (it is not optional), so no
     * engine of this release serves without its hook's script.
     */
    private static List<Volume> volumes(
            RoleTemplate.PodTemplate template, DesiredRole role, Optional<String> hookConfigMap) {
        List<Volume> volumes = new ArrayList<>(template.volumes() == null ? List.of() : template.volumes());
        role.sharedMemory()
                .value()
                .ifPresent(size -> volumes.add(new VolumeBuilder()
                        .withName(RoleTemplate.SHARED_MEMORY_VOLUME)
                        .withNewEmptyDir()
                        .withMedium("Memory")
                        .withSizeLimit(new Quantity(size))
                        .endEmptyDir()
                        .build()));
        hookConfigMap.ifPresent(name -> volumes.add(new VolumeBuilder()
                .withName(DRAIN_HOOK_VOLUME)
                .withNewConfigMap()
                .withName(name)
                .withOptional(false)
                .endConfigMap()
                .build()));
        return volumes.isEmpty() ? null : volumes;
    }

    /** The ConfigMap this release's hooked Pods of the deployment mount. */
    public String hookConfigMapName(DesiredDeployment deployment) {
        return Names.drainHook(deployment.owner().name(), hookRevision);
    }

    /**
     * The hook's script as the deployment's Pods mount it: immutable, since Pods of one revision must all run the same
     * text and the name carries the revision; owned by the deployment, so it goes with it.
     */
    public ConfigMap hookConfigMap(DesiredDeployment deployment) {
        return new ConfigMapBuilder()
                .withNewMetadata()
                .withName(hookConfigMapName(deployment))
                .withNamespace(deployment.owner().namespace())
                .withLabels(
                        Map.of(Labels.DEPLOYMENT, deployment.owner().name(), Labels.DRAIN_HOOK_REVISION, hookRevision))
                .withOwnerReferences(ownerReference(deployment.owner()))
                .endMetadata()
                .withImmutable(true)
                .withData(Map.of(DrainHook.FILE, hookScript))
                .build();
    }

    /** The hook ConfigMap a Pod mounts, if any. */
    public static Optional<String> hookConfigMapOf(Pod pod) {
        return Optional.ofNullable(pod.getSpec()).map(spec -> spec.getVolumes()).orElse(List.of()).stream()
                .filter(v -> DRAIN_HOOK_VOLUME.equals(v.getName()) && v.getConfigMap() != null)
                .map(v -> v.getConfigMap().getName())
                .findFirst();
    }

    private static Map<String, String> labels(MemberSlot slot) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(Labels.DEPLOYMENT, slot.deployment().owner().name());
        labels.put(Labels.ROLE, slot.role().name());
        labels.put(Labels.ROLE_KIND, slot.role().kind().wireName());
        labels.put(Labels.REPLICA, Integer.toString(slot.ordinal()));
        labels.put(Labels.MEMBER_INDEX, Integer.toString(slot.member()));
        labels.put(Labels.SERVING, Labels.SERVING_YES);
        slot.deployment()
                .router()
                .ifPresent(r -> labels.putAll(RouterLayout.of(r.kind()).memberLabels(slot)));
        if (queuedByKueue(slot.role())) {
            labels.put(
                    KUEUE_POD_GROUP,
                    Names.replica(slot.deployment().owner().name(), slot.role().name(), slot.ordinal()));
        }
        return labels;
    }

    /**
     * Whether the role's Pods name a Kueue queue: each replica is then one pod group, which Kueue admits whole, as it
     * does a LeaderWorkerSet's groups (sigs.k8s.io/kueue, pkg/controller/jobs/pod, GroupNameLabel,
     * GroupTotalCountAnnotation, GroupServingAnnotationKey).
     */
    private static boolean queuedByKueue(DesiredRole role) {
        return Optional.ofNullable(role.template().pod())
                .map(RoleTemplate.PodTemplate::metadata)
                .map(RoleTemplate.Metadata::labels)
                .filter(labels -> labels.containsKey(KUEUE_QUEUE))
                .isPresent();
    }

    private static Map<String, String> annotations(
            MemberSlot slot, int enginePort, boolean tls, boolean operatorBuilt, DrainTimeline timeline) {
        DesiredRole role = slot.role();
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.REPLICA_SIZE, Integer.toString(role.size()));
        if (role.defaultImage()) {
            annotations.put(Annotations.DEFAULT_IMAGE, role.image());
        }
        if (operatorBuilt) {
            timeline.engineShutdown()
                    .ifPresent(seconds -> annotations.put(Annotations.ENGINE_SHUTDOWN, Integer.toString(seconds)));
        }
        role.sharedMemory()
                .value()
                .filter(size -> role.sharedMemory().defaulted())
                .ifPresent(size -> annotations.put(Annotations.DEFAULT_SHARED_MEMORY, size));
        if (operatorBuilt && slot.leader()) {
            role.startupSeconds()
                    .value()
                    .filter(seconds -> role.startupSeconds().defaulted())
                    .ifPresent(
                            seconds -> annotations.put(Annotations.DEFAULT_STARTUP_SECONDS, Integer.toString(seconds)));
        }
        if (RoutingProxy.fronts(slot)) {
            annotations.put(
                    Annotations.ROUTING_PROXY_IMAGE,
                    slot.deployment().router().orElseThrow().images().routingProxy());
        }
        if (operatorBuilt) {
            annotations.put(Annotations.SCRAPE, "true");
            annotations.put(Annotations.SCRAPE_PORT, Integer.toString(enginePort));
            annotations.put(Annotations.SCRAPE_PATH, METRICS_PATH);
            annotations.put(Annotations.SCRAPE_SCHEME, tls ? "https" : "http");
        }
        slot.deployment()
                .router()
                .ifPresent(r -> annotations.putAll(RouterLayout.of(r.kind()).memberAnnotations(slot)));
        if (queuedByKueue(role)) {
            annotations.put(KUEUE_POD_GROUP_SIZE, Integer.toString(role.size()));
            // a replica never finishes: without this Kueue would reclaim its quota when a member exits
            annotations.put(KUEUE_POD_GROUP_SERVING, "true");
        }
        return annotations;
    }

    /**
     * Holds off the readiness probe, and restarts the engine, only if it has not answered within {@code seconds}: the
     * time a model may take to load.
     */
    private static Probe startup(EngineProfile profile, int enginePort, boolean tls, int seconds) {
        return healthCheck(profile, enginePort, tls, failuresWithin(seconds));
    }

    /** How many probes in a row, one every {@link #PROBE_PERIOD_SECONDS}, cover {@code seconds}. */
    private static int failuresWithin(int seconds) {
        return (seconds + PROBE_PERIOD_SECONDS - 1) / PROBE_PERIOD_SECONDS;
    }

    private static Probe readiness(EngineProfile profile, int enginePort, boolean tls) {
        return healthCheck(profile, enginePort, tls, 3);
    }

    /** The engine's health endpoint, asked every {@link #PROBE_PERIOD_SECONDS}, failing after {@code failures} misses. */
    private static Probe healthCheck(EngineProfile profile, int enginePort, boolean tls, int failures) {
        return new ProbeBuilder()
                .withNewHttpGet()
                .withPath(profile.healthPath())
                .withPort(new IntOrString(enginePort))
                .withScheme(tls ? "HTTPS" : "HTTP")
                .endHttpGet()
                .withPeriodSeconds(PROBE_PERIOD_SECONDS)
                .withTimeoutSeconds(2)
                .withFailureThreshold(failures)
                .build();
    }

    static OwnerReference ownerReference(DesiredDeployment.Owner owner) {
        return new OwnerReferenceBuilder()
                .withApiVersion(owner.apiVersion())
                .withKind(owner.kind())
                .withName(owner.name())
                .withUid(owner.uid())
                .withController(true)
                .withBlockOwnerDeletion(true)
                .build();
    }

    private static boolean usesAny(List<String> argv, List<String> flags) {
        return argv.stream()
                .anyMatch(arg -> flags.stream().anyMatch(flag -> arg.equals(flag) || arg.startsWith(flag + "=")));
    }
}
