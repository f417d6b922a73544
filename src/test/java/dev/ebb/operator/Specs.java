package dev.ebb.operator;

import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Resolution;
import dev.ebb.operator.api.RouterImages;
import dev.ebb.operator.api.SpecResolver;
import dev.ebb.operator.api.v1alpha1.DisruptionSpec;
import dev.ebb.operator.api.v1alpha1.EngineSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.ModelSpec;
import dev.ebb.operator.api.v1alpha1.RetirementSpec;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.RoleTemplate;
import dev.ebb.operator.api.v1alpha1.RolloutSpec;
import dev.ebb.operator.api.v1alpha1.RouterSpec;
import dev.ebb.operator.api.v1alpha1.ScalingSpec;
import dev.ebb.operator.render.RouterLayout;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.awaitility.Awaitility;

/** Builders for ModelDeployments in tests: every field starts unset, as a user would leave it. */
public final class Specs {
    public static final SpecResolver RESOLVER = new SpecResolver(
            engine -> "default/" + engine.wireName() + ":test",
            router -> new RouterImages(
                    "default/" + router.wireName() + ":test",
                    "default/router-proxy:test",
                    "default/routing-proxy:test"),
            RouterLayout::unservableBy);

    private Specs() {}

    public static Deployment deployment(String name, String engine) {
        return new Deployment(name, engine);
    }

    public static Role role(String name) {
        return new Role(name);
    }

    /** Sets one role's replicas, as `kubectl scale` would. */
    public static void scale(KubernetesClient client, String namespace, String name, String role, int replicas) {
        editRole(client, namespace, name, role, r -> withReplicas(r, replicas));
    }

    /**
     * Changes one role as `kubectl edit` would: an operator status write in between makes the edit conflict, and it is
     * tried again.
     */
    public static void editRole(
            KubernetesClient client, String namespace, String name, String role, UnaryOperator<RoleSpec> change) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .ignoreExceptionsInstanceOf(KubernetesClientException.class)
                .until(() -> client.resources(ModelDeployment.class)
                                .inNamespace(namespace)
                                .withName(name)
                                .edit(md -> {
                                    ModelDeploymentSpec s = md.getSpec();
                                    List<RoleSpec> roles = s.roles().stream()
                                            .map(r -> r.name().equals(role) ? change.apply(r) : r)
                                            .toList();
                                    md.setSpec(new ModelDeploymentSpec(
                                            s.model(), s.engine(), s.router(), roles, s.scaling()));
                                    return md;
                                })
                        != null);
    }

    public static RoleSpec withReplicas(RoleSpec r, Integer replicas) {
        return new RoleSpec(
                r.name(),
                r.kind(),
                replicas,
                r.size(),
                r.image(),
                r.port(),
                r.resources(),
                r.extraArgs(),
                r.env(),
                r.command(),
                r.terminationGracePeriodSeconds(),
                r.nodeSelector(),
                r.tolerations(),
                r.retirement(),
                r.rollout(),
                r.template(),
                r.sharedMemory(),
                r.startupSeconds(),
                r.livenessSeconds(),
                r.partialPlacementSeconds(),
                r.disruption());
    }

    public static RoleSpec withImage(RoleSpec r, String image) {
        return new RoleSpec(
                r.name(),
                r.kind(),
                r.replicas(),
                r.size(),
                image,
                r.port(),
                r.resources(),
                r.extraArgs(),
                r.env(),
                r.command(),
                r.terminationGracePeriodSeconds(),
                r.nodeSelector(),
                r.tolerations(),
                r.retirement(),
                r.rollout(),
                r.template(),
                r.sharedMemory(),
                r.startupSeconds(),
                r.livenessSeconds(),
                r.partialPlacementSeconds(),
                r.disruption());
    }

    public static RoleSpec withGrace(RoleSpec r, Integer grace) {
        return new RoleSpec(
                r.name(),
                r.kind(),
                r.replicas(),
                r.size(),
                r.image(),
                r.port(),
                r.resources(),
                r.extraArgs(),
                r.env(),
                r.command(),
                grace,
                r.nodeSelector(),
                r.tolerations(),
                r.retirement(),
                r.rollout(),
                r.template(),
                r.sharedMemory(),
                r.startupSeconds(),
                r.livenessSeconds(),
                r.partialPlacementSeconds(),
                r.disruption());
    }

    public static final class Deployment {
        private final String name;
        private String namespace = "team-a";
        private String engine;
        private String engineImage;
        private String model = "Qwen/Qwen3-8B";
        private String modelPath;
        private RouterSpec router;
        private List<RoleSpec> roles = new ArrayList<>();
        private ScalingSpec scaling;

        private Deployment(String name, String engine) {
            this.name = name;
            this.engine = engine;
        }

        public Deployment namespace(String value) {
            namespace = value;
            return this;
        }

        public Deployment engineImage(String value) {
            engineImage = value;
            return this;
        }

        public Deployment model(String value) {
            model = value;
            return this;
        }

        public Deployment modelPath(String value) {
            modelPath = value;
            return this;
        }

        public Deployment router(String routerName) {
            router = new RouterSpec(routerName, null, null, null, null);
            return this;
        }

        public Deployment router(String routerName, int replicas) {
            router = new RouterSpec(routerName, replicas, null, null, null);
            return this;
        }
        /** The router's own drain window, on the router set before. */
        public Deployment routerDrainSeconds(Integer seconds) {
            router = new RouterSpec(router.name(), router.replicas(), router.image(), router.extraArgs(), seconds);
            return this;
        }

        public Deployment role(Role role) {
            roles.add(role.build());
            return this;
        }

        public Deployment roles(List<RoleSpec> value) {
            roles = value;
            return this;
        }
        /** The role the scale subresource drives; a deployment with a Prefill or Decode role must name one. */
        public Deployment scaling(String role) {
            scaling = new ScalingSpec(role, null);
            return this;
        }

        public Deployment scaling(String role, Integer replicas) {
            scaling = new ScalingSpec(role, replicas);
            return this;
        }

        public ModelDeployment build() {
            ModelDeployment md = new ModelDeployment();
            md.setMetadata(new ObjectMetaBuilder()
                    .withName(name)
                    .withNamespace(namespace)
                    .withUid("uid-" + name)
                    .build());
            md.setSpec(new ModelDeploymentSpec(
                    new ModelSpec(model, modelPath), new EngineSpec(engine, engineImage), router, roles, scaling));
            return md;
        }

        /** Resolves the spec, failing the test when it does not pass the checks. */
        public DesiredDeployment desired() {
            Resolution resolution = RESOLVER.resolve(build());
            if (resolution instanceof Resolution.Accepted accepted) {
                return accepted.deployment();
            }
            throw new AssertionError("spec rejected: " + ((Resolution.Rejected) resolution).summary());
        }
    }

    public static final class Role {
        private final String name;
        private String kind;
        private Integer replicas;
        private Integer size;
        private String image;
        private Integer port;
        private ResourceRequirements resources;
        private List<String> extraArgs;
        private List<EnvVar> env;
        private List<String> command;
        private Integer grace;
        private Map<String, String> nodeSelector;
        private List<Toleration> tolerations;
        private RetirementSpec retirement;
        private RolloutSpec rollout;
        private RoleTemplate template;
        private String sharedMemory;
        private Integer startupSeconds;
        private Integer livenessSeconds;
        private Integer partialPlacementSeconds;
        private DisruptionSpec disruption;

        private Role(String name) {
            this.name = name;
        }

        public Role kind(String value) {
            kind = value;
            return this;
        }

        public Role replicas(Integer value) {
            replicas = value;
            return this;
        }

        public Role size(Integer value) {
            size = value;
            return this;
        }

        public Role image(String value) {
            image = value;
            return this;
        }

        public Role port(Integer value) {
            port = value;
            return this;
        }

        public Role resources(ResourceRequirements value) {
            resources = value;
            return this;
        }

        public Role extraArgs(String... value) {
            extraArgs = List.of(value);
            return this;
        }

        public Role extraArgs(List<String> value) {
            extraArgs = value;
            return this;
        }

        public Role env(List<EnvVar> value) {
            env = value;
            return this;
        }

        public Role command(String... value) {
            command = List.of(value);
            return this;
        }

        public Role grace(Integer value) {
            grace = value;
            return this;
        }

        public Role nodeSelector(Map<String, String> value) {
            nodeSelector = value;
            return this;
        }

        public Role tolerations(List<Toleration> value) {
            tolerations = value;
            return this;
        }

        public Role drainSeconds(Integer value) {
            retirement = new RetirementSpec(value);
            return this;
        }

        public Role maxSurge(Integer value) {
            rollout = new RolloutSpec(value);
            return this;
        }

        public Role template(RoleTemplate value) {
            template = value;
            return this;
        }

        public Role sharedMemory(String value) {
            sharedMemory = value;
            return this;
        }

        public Role startupSeconds(Integer value) {
            startupSeconds = value;
            return this;
        }

        public Role livenessSeconds(Integer value) {
            livenessSeconds = value;
            return this;
        }

        public Role partialPlacementSeconds(Integer value) {
            partialPlacementSeconds = value;
            return this;
        }

        public Role disruption(Integer maxUnavailable, String nodeMaintenance) {
            disruption = new DisruptionSpec(maxUnavailable, nodeMaintenance);
            return this;
        }

        public RoleSpec build() {
            return new RoleSpec(
                    name,
                    kind,
                    replicas,
                    size,
                    image,
                    port,
                    resources,
                    extraArgs,
                    env,
                    command,
                    grace,
                    nodeSelector,
                    tolerations,
                    retirement,
                    rollout,
                    template,
                    sharedMemory,
                    startupSeconds,
                    livenessSeconds,
                    partialPlacementSeconds,
                    disruption);
        }
    }
}
