package dev.ebb.operator.sandbox;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.DesiredRole;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.config.EbbSettings;
import dev.ebb.operator.drain.EngineShutdown;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.render.ServiceRenderer;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.HookScriptMounts;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.LifecycleBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The comparison: the same engine Pods owned by a plain controller that acts as a StatefulSet does. Fewer replicas
 * means the highest ordinals are deleted at once; a new image replaces one Pod at a time, highest first, each deleted
 * as soon as the others are ready; a Pod deleted by hand is created again. The Pods carry Ebb's drain hook
 * ({@link Removal#EBB_HOOK_ONLY}), no hook ({@link Removal#NAIVE}) or a fixed sleep ({@link Removal#HOOK_ONLY}); nothing
 * withdraws a replica before its delete or asks whether an engine is busy.
 */
final class PlainFleet implements Fleet {
    private static final PodRenderer RENDERER = new PodRenderer();

    static final int FIXED_SLEEP_SECONDS = 15;
    static final List<String> FIXED_SLEEP_HOOK = List.of("sleep", Integer.toString(FIXED_SLEEP_SECONDS));
    private final KubernetesClient client;
    private final String namespace;
    private final Removal removal;
    private final ScheduledExecutorService loop =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("plain-controller"));
    private volatile int replicas;
    private volatile int grace;
    /** The image the operator would run when the spec names none, so both fleets start alike. */
    private volatile String image = EbbSettings.of(Map.of()).images().vllm();

    PlainFleet(KubernetesClient client, String namespace, Removal removal) {
        this.client = client;
        this.namespace = namespace;
        this.removal = removal;
    }

    @Override
    public void deploy(int replicas, int grace) {
        this.replicas = replicas;
        this.grace = grace;
        // the role's Service, as the operator renders it, for clients that come without a router
        DesiredDeployment deployment = desired();
        Service service =
                ServiceRenderer.roleService(deployment, deployment.roles().get(0));
        service.getMetadata().setOwnerReferences(List.of());
        client.resource(service).create();
        loop.scheduleWithFixedDelay(this::reconcile, 0, 100, TimeUnit.MILLISECONDS);
    }

    @Override
    public void scaleTo(int replicas) {
        this.replicas = replicas;
    }

    @Override
    public void rollout(String image) {
        this.image = image;
    }

    @Override
    public boolean settled() {
        List<Pod> pods = pods();
        return pods.size() == replicas
                && pods.stream()
                        .allMatch(p -> p.getMetadata().getDeletionTimestamp() == null
                                && Readiness.isPodReady(p)
                                && current(p));
    }

    private void reconcile() {
        try {
            Map<Integer, Pod> byOrdinal =
                    pods().stream().collect(Collectors.toMap(PlainFleet::ordinal, Function.identity(), (a, b) -> a));
            for (int ordinal = 0; ordinal < replicas; ordinal++) {
                if (!byOrdinal.containsKey(ordinal)) {
                    client.resource(HookScriptMounts.provide(client, render(ordinal)))
                            .create();
                }
            }
            byOrdinal.forEach((ordinal, pod) -> {
                if (ordinal >= replicas && pod.getMetadata().getDeletionTimestamp() == null) {
                    client.resource(pod).delete();
                }
            });
            boolean allReady = byOrdinal.size() == replicas
                    && byOrdinal.values().stream()
                            .allMatch(p -> p.getMetadata().getDeletionTimestamp() == null && Readiness.isPodReady(p));
            if (allReady) {
                byOrdinal.values().stream()
                        .filter(p -> !current(p))
                        .max(Comparator.comparingInt(PlainFleet::ordinal))
                        .ifPresent(outdated -> client.resource(outdated).delete());
            }
        } catch (KubernetesClientException e) {
            // a conflict with a Pod going away: the next pass sees the outcome
        }
    }

    private DesiredDeployment desired() {
        return Specs.deployment(OperatorFleet.NAME, "vLLM")
                .namespace(namespace)
                .role(Specs.role(OperatorFleet.ROLE)
                        .replicas(replicas)
                        .grace(grace)
                        .image(image))
                .desired();
    }

    private Pod render(int ordinal) {
        DesiredDeployment deployment = desired();
        DesiredRole role = deployment.roles().get(0);
        Pod pod = RENDERER.render(new MemberSlot(deployment, role, ordinal, 0), RENDERER.configHash(deployment, role));
        pod.getMetadata().setOwnerReferences(List.of());
        Container engine = pod.getSpec().getContainers().get(0);
        switch (removal) {
            case EBB_HOOK_ONLY -> {
                // the drain hook the operator renders stays as it is
            }
            case HOOK_ONLY -> {
                engine.setLifecycle(new LifecycleBuilder()
                        .withNewPreStop()
                        .withNewExec()
                        .withCommand(FIXED_SLEEP_HOOK)
                        .endExec()
                        .endPreStop()
                        .build());
                engine.setCommand(withEnginesOwnSigterm(engine.getCommand()));
            }
            default -> {
                engine.setLifecycle(null);
                engine.setCommand(withEnginesOwnSigterm(engine.getCommand()));
            }
        }
        return pod;
    }

    /** The command line as a deployment without Ebb runs it: vLLM's SIGTERM as it ships, without the drain Ebb sizes. */
    private static List<String> withEnginesOwnSigterm(List<String> command) {
        List<String> plain = new ArrayList<>(command);
        int flag = plain.indexOf(EngineShutdown.VLLM_FLAG);
        if (flag >= 0 && flag + 1 < plain.size()) {
            plain.subList(flag, flag + 2).clear();
        }
        return plain;
    }

    private List<Pod> pods() {
        return client.pods()
                .inNamespace(namespace)
                .withLabel(Labels.DEPLOYMENT, OperatorFleet.NAME)
                .list()
                .getItems();
    }

    private boolean current(Pod pod) {
        return image.equals(pod.getSpec().getContainers().get(0).getImage());
    }

    private static int ordinal(Pod pod) {
        return Integer.parseInt(pod.getMetadata().getLabels().get(Labels.REPLICA));
    }

    @Override
    public void close() {
        loop.shutdownNow();
    }
}
