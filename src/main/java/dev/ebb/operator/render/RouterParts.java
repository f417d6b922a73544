package dev.ebb.operator.render;

import dev.ebb.operator.api.DesiredRouter;
import dev.ebb.operator.drain.RouterDrain;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Lifecycle;
import io.fabric8.kubernetes.api.model.LifecycleBuilder;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import java.util.ArrayList;
import java.util.List;

/** Pieces every router layout is built from. */
final class RouterParts {
    private RouterParts() {}

    static ServicePort servicePort(String name, int number) {
        return new ServicePortBuilder()
                .withName(name)
                .withPort(number)
                .withTargetPort(new IntOrString(number))
                .withProtocol("TCP")
                .build();
    }

    static List<ContainerPort> containerPorts(List<ServicePort> ports) {
        return ports.stream()
                .map(p -> new ContainerPortBuilder()
                        .withName(p.getName())
                        .withContainerPort(p.getPort())
                        .withProtocol("TCP")
                        .build())
                .toList();
    }

    /** A container that cannot gain privileges or write its image. */
    static SecurityContext locked() {
        return new SecurityContextBuilder()
                .withAllowPrivilegeEscalation(false)
                .withReadOnlyRootFilesystem(true)
                .withNewCapabilities()
                .withDrop("ALL")
                .endCapabilities()
                .build();
    }

    /** Where a router whose image is locked read-only may still write: its temporary files and its home. */
    static final String SCRATCH_DIR = "/tmp";

    private static final String SCRATCH_VOLUME = "scratch";

    /** An empty directory that lives as long as the Pod, so that the root filesystem can stay read-only. */
    static Volume scratchVolume() {
        return new VolumeBuilder()
                .withName(SCRATCH_VOLUME)
                .withNewEmptyDir()
                .endEmptyDir()
                .build();
    }

    static VolumeMount scratchMount() {
        return new VolumeMountBuilder()
                .withName(SCRATCH_VOLUME)
                .withMountPath(SCRATCH_DIR)
                .build();
    }

    /**
     * Points a process that runs under a user of no home of its own at the scratch directory: libraries that cache
     * under ~ or write temporary files then find a place to do so.
     */
    static List<EnvVar> scratchEnv() {
        return List.of(
                new EnvVarBuilder().withName("HOME").withValue(SCRATCH_DIR).build(),
                new EnvVarBuilder().withName("TMPDIR").withValue(SCRATCH_DIR).build());
    }

    /** Pod discovery, read-only. */
    static PolicyRule podReader() {
        return new PolicyRuleBuilder()
                .withApiGroups("")
                .withResources("pods")
                .withVerbs("get", "list", "watch")
                .build();
    }

    /**
     * Holds the router's SIGTERM for the settle, while the router Service's endpoints drop the Pod, so that a client
     * the Service still sends here is served rather than refused by a router that has stopped listening. The image's
     * own sleep: Kubernetes' sleep action needs 1.30 or later.
     */
    static Lifecycle settleFirst(RouterDrain drain) {
        return new LifecycleBuilder()
                .withNewPreStop()
                .withNewExec()
                .withCommand("sleep", Integer.toString(drain.settle()))
                .endExec()
                .endPreStop()
                .build();
    }

    /**
     * The one container of a router that is a single Python process (vLLM's router, SGLang's gateway launcher): its
     * flags, its ports, a read-only root with scratch space, a readiness probe on the path the release serves, and a
     * settle before its SIGTERM, after which the router's own graceful shutdown finishes the streams it carries.
     */
    static Container singleProcess(
            DesiredRouter router,
            List<String> flags,
            List<ServicePort> ports,
            String readyPath,
            int readyPort,
            RouterDrain drain) {
        List<String> args = new ArrayList<>(flags);
        args.addAll(router.extraArgs());
        return new ContainerBuilder()
                .withName("router")
                .withImage(router.images().router())
                .withArgs(args)
                .withEnv(scratchEnv())
                .withPorts(containerPorts(ports))
                .withSecurityContext(locked())
                .withVolumeMounts(scratchMount())
                .withReadinessProbe(new ProbeBuilder()
                        .withNewHttpGet()
                        .withPath(readyPath)
                        .withPort(new IntOrString(readyPort))
                        .endHttpGet()
                        .build())
                .withLifecycle(settleFirst(drain))
                .build();
    }
}
