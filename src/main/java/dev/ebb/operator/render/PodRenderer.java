package dev.ebb.operator.render;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.drain.DrainTimeline;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.drain.InFlightGauges;
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
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * Turns one member slot into its Pod. Pure and deterministic: the same slot always renders byte-identical Pods,
 * which is what lets the config hash stand for "what would be rendered today".
 */
public final class PodRenderer {
    public static final String ENGINE_CONTAINER = "main";
    public static final String METRICS_PATH = "/metrics";
    public static final String PORT_NAME = "http";
    private static final int HASH_HEX_LENGTH = 10;
    private static final ObjectMapper CANONICAL_JSON = JsonMapper.builder()
            .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .build();

    private PodRenderer() {
    }

    /**
     * The hash of what a role renders, taken over the members of its first replica with the hash itself left out.
     * Other replicas differ from it only by their ordinal, so any edit that changes one of them changes this.
     */
    public static String configHash(DesiredDeployment deployment, DesiredRole role) {
        return hashOf(IntStream.range(0, role.size()).mapToObj(member -> renderWithoutHash(new MemberSlot(deployment, role, 0, member))).toList());
    }

    /**
     * The hash of a replica's rendered members. The drain hook's text is left out: it is the operator's, not the spec's,
     * and a new operator release that changes only the hook must not turn over every replica (reloading every model).
     */
    static String hashOf(List<Pod> rendered) {
        List<Pod> firstReplica = rendered.stream().map(PodRenderer::withoutHookText).toList();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(CANONICAL_JSON.writeValueAsBytes(firstReplica));
            return HexFormat.of().formatHex(digest).substring(0, HASH_HEX_LENGTH);
        } catch (JsonProcessingException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot hash a rendered Pod", e);
        }
    }

    public static Pod render(MemberSlot slot, String configHash) {
        Pod pod = renderWithoutHash(slot);
        pod.getMetadata().getLabels().put(Labels.CONFIG_HASH, configHash);
        if (hooked(pod)) {
            pod.getMetadata().getAnnotations().put(Annotations.HOOK_REVISION, DrainHook.REVISION);
        }
        return pod;
    }

    /** Whether the Pod's engine container drains through the operator's hook. */
    public static boolean hooked(Pod pod) {
        return engineContainer(pod).map(c -> c.getLifecycle() != null && c.getLifecycle().getPreStop() != null
                && c.getLifecycle().getPreStop().getExec() != null).orElse(false);
    }

    /** Whether the Pod carries another hook than this operator renders (an older release's, or one of unknown age). */
    public static boolean hookOutdated(Pod pod) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        return hooked(pod) && (annotations == null || !DrainHook.REVISION.equals(annotations.get(Annotations.HOOK_REVISION)));
    }

    private static Optional<Container> engineContainer(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getContainers() == null ? Optional.empty()
                : pod.getSpec().getContainers().stream().filter(c -> ENGINE_CONTAINER.equals(c.getName())).findFirst();
    }

    private static Pod withoutHookText(Pod pod) {
        if (!hooked(pod)) {
            return pod;
        }
        Pod copy = new PodBuilder(pod).build();
        ExecAction exec = engineContainer(copy).orElseThrow().getLifecycle().getPreStop().getExec();
        exec.setCommand(DrainHook.withoutScriptText(exec.getCommand()));
        return copy;
    }

    private static Pod renderWithoutHash(MemberSlot slot) {
        DesiredDeployment deployment = slot.deployment();
        DesiredRole role = slot.role();
        EngineProfile profile = EngineProfile.of(deployment.engine());
        boolean operatorBuilt = !role.takeOver();
        List<String> command = operatorBuilt ? profile.command(slot) : role.command();
        boolean tls = operatorBuilt && usesAny(command, profile.tlsFlags());
        int enginePort = RoutingProxy.enginePort(slot);

        ContainerBuilder main = new ContainerBuilder()
                .withName(ENGINE_CONTAINER)
                .withImage(role.image())
                .withCommand(command)
                .addNewPort().withName(PORT_NAME).withContainerPort(enginePort).withProtocol("TCP").endPort()
                .withEnv(role.env());
        role.resources().ifPresent(main::withResources);
        if (operatorBuilt && slot.leader()) {
            main.withReadinessProbe(readiness(profile, enginePort, tls));
        }
        DrainTimeline timeline = drainTimeline(deployment, role);
        if (timeline.hooked()) {
            main.withNewLifecycle().withNewPreStop().withNewExec()
                    .withCommand(DrainHook.command(timeline, tls ? "https" : "http", enginePort, METRICS_PATH,
                            InFlightGauges.of(deployment.engine())))
                    .endExec().endPreStop().endLifecycle();
        }

        return new PodBuilder()
                .withNewMetadata()
                    .withName(slot.podName())
                    .withNamespace(deployment.owner().namespace())
                    .withLabels(labels(slot))
                    .withAnnotations(annotations(slot, enginePort, tls, operatorBuilt))
                    .withOwnerReferences(ownerReference(deployment.owner()))
                .endMetadata()
                .withNewSpec()
                    .withHostname(role.size() > 1 ? slot.podName() : null)
                    .withSubdomain(role.size() > 1 ? Names.replica(deployment.owner().name(), role.name(), slot.ordinal()) : null)
                    // A Service named like the engine would inject e.g. VLLM_PORT, which vLLM reads as its own setting.
                    .withEnableServiceLinks(false)
                    .withTerminationGracePeriodSeconds(timeline.grace().map(Integer::longValue).orElse(null))
                    .withNodeSelector(role.nodeSelector().isEmpty() ? null : role.nodeSelector())
                    .withTolerations(role.tolerations())
                    .withInitContainers(RoutingProxy.fronts(slot) && deployment.platform().nativeSidecars()
                            ? List.of(RoutingProxy.container(slot, deployment.platform())) : List.of())
                    .withContainers(RoutingProxy.fronts(slot) && !deployment.platform().nativeSidecars()
                            ? List.of(main.build(), RoutingProxy.container(slot, deployment.platform())) : List.of(main.build()))
                .endSpec()
                .build();
    }

    public static DrainTimeline drainTimeline(DesiredDeployment deployment, DesiredRole role) {
        return DrainTimelines.of(role.grace(), deployment.engine(), role.kind(), role.size(), role.takeOver());
    }

    private static Map<String, String> labels(MemberSlot slot) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(Labels.DEPLOYMENT, slot.deployment().owner().name());
        labels.put(Labels.ROLE, slot.role().name());
        labels.put(Labels.ROLE_KIND, slot.role().kind().name());
        labels.put(Labels.REPLICA, Integer.toString(slot.ordinal()));
        labels.put(Labels.MEMBER_INDEX, Integer.toString(slot.member()));
        labels.put(Labels.SERVING, Labels.SERVING_YES);
        slot.deployment().router().ifPresent(r -> labels.putAll(RouterLayout.of(r.kind()).memberLabels(slot)));
        return labels;
    }

    private static Map<String, String> annotations(MemberSlot slot, int enginePort, boolean tls, boolean operatorBuilt) {
        DesiredRole role = slot.role();
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.REPLICA_SIZE, Integer.toString(role.size()));
        if (operatorBuilt) {
            annotations.put(Annotations.SCRAPE, "true");
            annotations.put(Annotations.SCRAPE_PORT, Integer.toString(enginePort));
            annotations.put(Annotations.SCRAPE_PATH, METRICS_PATH);
            annotations.put(Annotations.SCRAPE_SCHEME, tls ? "https" : "http");
        }
        slot.deployment().router().ifPresent(r -> annotations.putAll(RouterLayout.of(r.kind()).memberAnnotations(slot)));
        return annotations;
    }

    private static Probe readiness(EngineProfile profile, int enginePort, boolean tls) {
        return new ProbeBuilder()
                .withNewHttpGet()
                    .withPath(profile.healthPath())
                    .withPort(new IntOrString(enginePort))
                    .withScheme(tls ? "HTTPS" : "HTTP")
                .endHttpGet()
                .withPeriodSeconds(5)
                .withTimeoutSeconds(2)
                .withFailureThreshold(3)
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
        return argv.stream().anyMatch(arg -> flags.stream().anyMatch(flag -> arg.equals(flag) || arg.startsWith(flag + "=")));
    }
}
