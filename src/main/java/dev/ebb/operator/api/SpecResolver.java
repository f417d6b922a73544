package dev.ebb.operator.api;

import dev.ebb.operator.api.v1alpha1.DisruptionSpec;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.EngineSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.ModelSpec;
import dev.ebb.operator.api.v1alpha1.NodeMaintenance;
import dev.ebb.operator.api.v1alpha1.RetirementSpec;
import dev.ebb.operator.api.v1alpha1.RoleKind;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.RoleTemplate;
import dev.ebb.operator.api.v1alpha1.RolloutSpec;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.api.v1alpha1.RouterSpec;
import dev.ebb.operator.api.v1alpha1.ScalingSpec;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Checks a ModelDeployment against the same rules its CRD enforces at admission, and resolves its defaults.
 * The operator cannot assume admission ran (an older CRD, a test server, a hand-edited object), and a resource
 * it cannot render in full must not be rendered in part.
 */
public final class SpecResolver {
    private static final Pattern QUANTITY = Pattern.compile(RoleSpec.QUANTITY_PATTERN);
    private static final Pattern DNS_LABEL = Pattern.compile(RoleSpec.NAME_PATTERN);
    private static final Pattern RESERVED_SUFFIX = Pattern.compile(RoleSpec.RESERVED_SUFFIX);
    private static final int MAX_MODEL_NAME = 256;
    private static final int MAX_MODEL_PATH = 1024;
    private static final int MAX_IMAGE = 512;

    private final Function<Engine, String> defaultImages;
    private final Function<RouterKind, RouterImages> routerImages;
    private final Function<DesiredDeployment, List<FieldError>> routerFit;

    /**
     * @param defaultImages the operator's image for each engine, used when neither role nor engine names one
     * @param routerImages the operator's images for each router; spec.router.image replaces the router's own
     * @param routerFit why the deployment's router could not serve it as resolved (the router's own layout knows)
     */
    public SpecResolver(
            Function<Engine, String> defaultImages,
            Function<RouterKind, RouterImages> routerImages,
            Function<DesiredDeployment, List<FieldError>> routerFit) {
        this.defaultImages = defaultImages;
        this.routerImages = routerImages;
        this.routerFit = routerFit;
    }

    public Resolution resolve(ModelDeployment md) {
        List<FieldError> errors = new ArrayList<>();
        String name = md.getMetadata().getName();
        if (name == null || !DNS_LABEL.matcher(name).matches()) {
            errors.add(new FieldError(
                    "metadata.name",
                    "must be a DNS label (lower-case letters, digits and '-', starting with a letter)"));
        }
        ModelDeploymentSpec spec = md.getSpec();
        if (spec == null) {
            errors.add(new FieldError("spec", "required"));
            return new Resolution.Rejected(errors);
        }
        Optional<String> modelName = modelName(spec.model(), errors);
        Optional<String> modelPath =
                Optional.ofNullable(spec.model()).map(ModelSpec::path).filter(p -> !p.isEmpty());
        modelPath
                .filter(p -> p.length() > MAX_MODEL_PATH)
                .ifPresent(p ->
                        errors.add(new FieldError("spec.model.path", "longer than " + MAX_MODEL_PATH + " characters")));
        Optional<Engine> engine = engine(spec.engine(), errors);
        Optional<DesiredRouter> router = router(spec.router(), engine, errors);
        List<DesiredRole> roles = roles(name, spec, engine, errors);
        router.ifPresent(r -> checkRolesFitRouter(r.kind(), spec.roles(), errors));
        Optional<DesiredScaling> scaling = scaling(spec, errors);
        if (!errors.isEmpty() || engine.isEmpty() || modelName.isEmpty() || scaling.isEmpty()) {
            return new Resolution.Rejected(List.copyOf(errors));
        }
        DesiredScaling scaled = scaling.get();
        List<DesiredRole> counted = roles.stream()
                .map(role -> role.name().equals(scaled.role())
                        ? role.withReplicas(scaled.scalingReplicas().orElse(role.replicas()))
                        : role)
                .toList();
        DesiredDeployment desired = new DesiredDeployment(
                owner(md), engine.get(), modelName.get(), modelPath, router, counted, scaled, Platform.CURRENT);
        List<FieldError> unservable = routerFit.apply(desired);
        return unservable.isEmpty() ? new Resolution.Accepted(desired) : new Resolution.Rejected(unservable);
    }

    /**
     * The role the scale subresource drives and the count it runs at. spec.scaling.replicas, when set, is that role's
     * count, whatever spec.roles[].replicas says: an autoscaler writes only the former (through /scale), and the API
     * server runs the CRD's rules on what a /scale write produces, so a rule refusing the two to differ would refuse
     * every autoscaler's write (apiextensions-apiserver pkg/registry/customresource/etcd.go: ScaleREST.Update writes
     * through the resource's own store, whose strategy.go ValidateUpdate runs the schema and its CEL rules; read in
     * stored copies of kubernetes/kubernetes, not at a pinned release tag).
     */
    private static Optional<DesiredScaling> scaling(ModelDeploymentSpec spec, List<FieldError> errors) {
        List<RoleSpec> roles = spec.roles();
        if (roles == null || roles.isEmpty() || roles.get(0) == null) {
            return Optional.empty();
        }
        ScalingSpec scaling = spec.scaling();
        Integer replicas = scaling == null ? null : scaling.replicas();
        checkRange("spec.scaling.replicas", replicas, RoleSpec.MIN_REPLICAS, RoleSpec.MAX_REPLICAS, errors);
        String named = scaling == null ? null : scaling.role();
        if (named == null) {
            boolean split = roles.stream()
                    .anyMatch(r -> r != null
                            && r.kind() != null
                            && !RoleKind.Server.wireName().equals(r.kind()));
            if (split) {
                errors.add(new FieldError("spec.scaling.role", ModelDeploymentSpec.SCALING_ROLE_REQUIRED));
                return Optional.empty();
            }
            return Optional.of(new DesiredScaling(
                    roles.get(0).name(),
                    0,
                    Optional.ofNullable(replicas),
                    Optional.ofNullable(roles.get(0).replicas())));
        }
        for (int i = 0; i < roles.size(); i++) {
            if (roles.get(i) != null && named.equals(roles.get(i).name())) {
                return Optional.of(new DesiredScaling(
                        named,
                        i,
                        Optional.ofNullable(replicas),
                        Optional.ofNullable(roles.get(i).replicas())));
            }
        }
        errors.add(new FieldError(
                "spec.scaling.role", ModelDeploymentSpec.SCALING_ROLE_UNKNOWN + "; got " + quote(named)));
        return Optional.empty();
    }

    private static DesiredDeployment.Owner owner(HasMetadata md) {
        return new DesiredDeployment.Owner(
                md.getApiVersion(),
                md.getKind(),
                md.getMetadata().getName(),
                md.getMetadata().getNamespace(),
                md.getMetadata().getUid());
    }

    private static Optional<String> modelName(ModelSpec model, List<FieldError> errors) {
        if (model == null || model.name() == null || model.name().isBlank()) {
            errors.add(new FieldError("spec.model.name", "required"));
            return Optional.empty();
        }
        if (model.name().length() > MAX_MODEL_NAME) {
            errors.add(new FieldError("spec.model.name", "longer than " + MAX_MODEL_NAME + " characters"));
        }
        return Optional.of(model.name());
    }

    private static Optional<Engine> engine(EngineSpec engine, List<FieldError> errors) {
        if (engine == null || engine.name() == null) {
            errors.add(new FieldError(
                    "spec.engine.name", "required; one of " + choices(Engine.values(), Engine::wireName)));
            return Optional.empty();
        }
        Optional<Engine> known = Engine.fromWireName(engine.name());
        if (known.isEmpty()) {
            errors.add(unsupported("spec.engine.name", engine.name(), choices(Engine.values(), Engine::wireName)));
        }
        checkImage("spec.engine.image", engine.image(), errors);
        return known;
    }

    private Optional<DesiredRouter> router(RouterSpec router, Optional<Engine> engine, List<FieldError> errors) {
        if (router == null) {
            return Optional.empty();
        }
        Optional<RouterKind> kind = Optional.ofNullable(router.name()).flatMap(RouterKind::fromWireName);
        if (kind.isEmpty()) {
            errors.add(
                    unsupported("spec.router.name", router.name(), choices(RouterKind.values(), RouterKind::wireName)));
        } else if (engine.isPresent() && !kind.get().serves(engine.get())) {
            errors.add(new FieldError(
                    "spec.router.name",
                    kind.get().wireName() + " does not serve engine "
                            + engine.get().wireName()));
        }
        checkRange("spec.router.replicas", router.replicas(), 0, RouterSpec.MAX_REPLICAS, errors);
        checkRange(
                "spec.router.drainSeconds",
                router.drainSeconds(),
                RetirementSpec.MIN_DRAIN_SECONDS,
                RetirementSpec.MAX_DRAIN_SECONDS,
                errors);
        checkImage("spec.router.image", router.image(), errors);
        checkCount("spec.router.extraArgs", router.extraArgs(), errors);
        return kind.map(k -> new DesiredRouter(
                k,
                router.replicas() == null ? 1 : router.replicas(),
                router.image() == null || router.image().isEmpty()
                        ? routerImages.apply(k)
                        : routerImages.apply(k).withRouter(router.image()),
                listOrEmpty(router.extraArgs()).stream()
                        .filter(Objects::nonNull)
                        .toList(),
                Optional.ofNullable(router.drainSeconds())));
    }

    /**
     * What vLLM's router and SGLang's gateway can reach. Each finds its engines by Pod IP and reaches all of them on
     * one port (production-stack parser.py --k8s-port at vllm-stack-0.1.12; smg router_args.py
     * --service-discovery-port at v1.9.0), so every role must serve on the first role's port. Each serves either whole
     * requests or a prefill/decode split, never both: the split routes only to Pods it can tell as prefill or decode
     * (vLLM's by the Pod's "model" label, which a Server Pod lacks and which its orchestrated routing cannot compare;
     * smg's by its prefill and decode selectors alone), and it needs a role of each half to route any request.
     */
    private static void checkRolesFitRouter(RouterKind router, List<RoleSpec> roles, List<FieldError> errors) {
        if (router == RouterKind.LLM_D_ROUTER || roles == null || roles.isEmpty() || roles.get(0) == null) {
            return;
        }
        String portFlag = router == RouterKind.VLLM_ROUTER ? "--k8s-port" : "--service-discovery-port";
        int firstPort = orDefault(roles.get(0).port(), RoleSpec.DEFAULT_PORT);
        Set<RoleKind> kinds = EnumSet.noneOf(RoleKind.class);
        for (int i = 0; i < roles.size(); i++) {
            RoleSpec role = roles.get(i);
            if (role == null) {
                continue;
            }
            int port = orDefault(role.port(), RoleSpec.DEFAULT_PORT);
            if (port != firstPort) {
                errors.add(new FieldError(
                        "spec.roles[" + i + "].port",
                        router.wireName() + " reaches every role on one port (" + portFlag
                                + "), that of spec.roles[0], " + firstPort + "; got " + port));
            }
            (role.kind() == null ? Optional.of(RoleKind.Server) : RoleKind.fromWireName(role.kind()))
                    .ifPresent(kinds::add);
        }
        if (kinds.stream().allMatch(kind -> kind == RoleKind.Server)) {
            return;
        }
        for (int i = 0; i < roles.size(); i++) {
            RoleSpec role = roles.get(i);
            if (role != null
                    && (role.kind() == null || RoleKind.Server.wireName().equals(role.kind()))) {
                errors.add(new FieldError(
                        "spec.roles[" + i + "].kind",
                        router.wireName() + " serves either Server roles or a Prefill/Decode split, not both"));
            }
        }
        for (RoleKind half : List.of(RoleKind.Prefill, RoleKind.Decode)) {
            if (!kinds.contains(half)) {
                errors.add(new FieldError(
                        "spec.roles",
                        router.wireName() + " splitting prefill from decode needs a " + half.wireName()
                                + " role; it routes no request without one"));
            }
        }
    }

    private List<DesiredRole> roles(
            String mdName, ModelDeploymentSpec spec, Optional<Engine> engine, List<FieldError> errors) {
        List<RoleSpec> roles = spec.roles();
        if (roles == null || roles.isEmpty()) {
            errors.add(new FieldError("spec.roles", "at least one role is required"));
            return List.of();
        }
        if (roles.size() > ModelDeploymentSpec.MAX_ROLES) {
            errors.add(new FieldError(
                    "spec.roles", "at most " + ModelDeploymentSpec.MAX_ROLES + " roles, got " + roles.size()));
        }
        Set<String> seen = new HashSet<>();
        List<DesiredRole> resolved = new ArrayList<>();
        for (int i = 0; i < roles.size(); i++) {
            String field = "spec.roles[" + i + "]";
            RoleSpec role = roles.get(i);
            if (role == null) {
                errors.add(new FieldError(field, "required"));
                continue;
            }
            checkRoleName(field + ".name", role.name(), mdName, errors);
            if (role.name() != null && !seen.add(role.name())) {
                errors.add(new FieldError(field + ".name", "duplicate role name \"" + role.name() + "\""));
            }
            if (behindLlmD(spec)
                    && RoleKind.Decode.wireName().equals(role.kind())
                    && listOrEmpty(role.command()).isEmpty()
                    && role.port() != null
                    && role.port() == ModelDeploymentSpec.ROUTING_PROXY_ENGINE_PORT) {
                errors.add(new FieldError(
                        field + ".port",
                        "cannot be " + role.port() + ": this Decode role's engine listens there,"
                                + " behind the routing proxy llm-d-router puts on the role's port"));
            }
            resolveRole(field, role, spec.engine(), engine, errors).ifPresent(resolved::add);
        }
        return List.copyOf(resolved);
    }

    private Optional<DesiredRole> resolveRole(
            String field, RoleSpec role, EngineSpec engineSpec, Optional<Engine> engine, List<FieldError> errors) {
        int before = errors.size();
        Optional<RoleKind> kind =
                role.kind() == null ? Optional.of(RoleKind.Server) : RoleKind.fromWireName(role.kind());
        if (kind.isEmpty()) {
            errors.add(unsupported(field + ".kind", role.kind(), choices(RoleKind.values(), RoleKind::wireName)));
        }
        DisruptionSpec disruption = role.disruption() == null ? new DisruptionSpec(null, null) : role.disruption();
        Optional<NodeMaintenance> maintenance = disruption.nodeMaintenance() == null
                ? Optional.of(NodeMaintenance.Protocol)
                : NodeMaintenance.fromWireName(disruption.nodeMaintenance());
        if (maintenance.isEmpty()) {
            errors.add(unsupported(
                    field + ".disruption.nodeMaintenance",
                    disruption.nodeMaintenance(),
                    choices(NodeMaintenance.values(), NodeMaintenance::name)));
        }
        checkRange(field + ".disruption.maxUnavailable", disruption.maxUnavailable(), 0, RoleSpec.MAX_REPLICAS, errors);
        checkRange(field + ".replicas", role.replicas(), RoleSpec.MIN_REPLICAS, RoleSpec.MAX_REPLICAS, errors);
        checkRange(field + ".size", role.size(), RoleSpec.MIN_SIZE, RoleSpec.MAX_SIZE, errors);
        checkRange(field + ".port", role.port(), 1, 65535, errors);
        checkRange(
                field + ".terminationGracePeriodSeconds",
                role.terminationGracePeriodSeconds(),
                RoleSpec.MIN_GRACE_SECONDS,
                RoleSpec.MAX_GRACE_SECONDS,
                errors);
        Integer drainSeconds =
                role.retirement() == null ? null : role.retirement().drainSeconds();
        checkRange(
                field + ".retirement.drainSeconds",
                drainSeconds,
                RetirementSpec.MIN_DRAIN_SECONDS,
                RetirementSpec.MAX_DRAIN_SECONDS,
                errors);
        Integer maxSurge = role.rollout() == null ? null : role.rollout().maxSurge();
        checkRange(field + ".rollout.maxSurge", maxSurge, 0, RolloutSpec.MAX_SURGE, errors);
        checkCount(field + ".extraArgs", role.extraArgs(), errors);
        checkCount(field + ".command", role.command(), errors);
        if (!listOrEmpty(role.command()).isEmpty()
                && !listOrEmpty(role.extraArgs()).isEmpty()) {
            errors.add(new FieldError(field + ".extraArgs", RoleSpec.EXTRA_ARGS_WITH_COMMAND));
        }
        if (setsFlag(role.extraArgs(), "--port")) {
            errors.add(
                    new FieldError(
                            field + ".extraArgs",
                            "must not set --port: the engine listens on " + field
                                    + ".port, which its probe, scrape annotations, drain hook and member reads all use; set the port there"));
        }
        if (setsFlag(role.extraArgs(), "--host")) {
            errors.add(
                    new FieldError(
                            field + ".extraArgs",
                            "must not set --host: the operator has the engine listen on every address"
                                    + " (0.0.0.0), since clients reach it on the Pod's address and its drain hook and reads on 127.0.0.1"));
        }
        if (setsFlag(role.extraArgs(), "--uds")) {
            errors.add(new FieldError(
                    field + ".extraArgs",
                    "must not set --uds: the engine would serve a Unix socket instead of " + field
                            + ".port, where its clients, probe, drain hook and member reads reach it"));
        }
        if (role.extraArgs() != null && role.extraArgs().stream().anyMatch(SpecResolver::turnsGaugesOff)) {
            errors.add(
                    new FieldError(
                            field + ".extraArgs",
                            "must not set --disable-log-stats: vLLM then publishes no"
                                    + " vllm:num_requests_running or vllm:num_requests_waiting, so the drain hook and the member reads could never see"
                                    + " the engine idle; every scale-down would wait out its drain budget and every deleted Pod its grace"));
        }
        engine.filter(e -> role.size() != null
                        && role.size() > 1
                        && role.port() != null
                        && role.port() == rendezvousPort(e))
                .ifPresent(e -> errors.add(new FieldError(
                        field + ".port",
                        "cannot be " + role.port() + ": a multi-Pod " + e.wireName()
                                + " replica's leader holds its rendezvous port there")));
        checkImage(field + ".image", role.image(), errors);
        checkSharedMemory(field + ".sharedMemory", role.sharedMemory(), errors);
        boolean ownImage = role.image() != null && !role.image().isEmpty();
        String image = ownImage ? role.image() : engineSpec.image();
        if (engine.filter(e -> e == Engine.VLLM).isPresent()
                && role.size() != null
                && role.size() > 1
                && EngineRelease.olderThan(image, VLLM_MULTI_NODE_SINCE)) {
            errors.add(new FieldError(
                    ownImage ? field + ".image" : "spec.engine.image",
                    "names vLLM " + EngineRelease.of(image).orElseThrow()
                            + ", which has no --nnodes, --node-rank, --master-addr or --master-port, the flags the members of a multi-Pod replica"
                            + " (" + field + ".size " + role.size() + ") start with; use vLLM " + VLLM_MULTI_NODE_SINCE
                            + " or later"));
        }
        if (errors.size() > before || kind.isEmpty() || maintenance.isEmpty() || engine.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new DesiredRole(
                role.name(),
                kind.get(),
                orDefault(role.replicas(), RoleSpec.DEFAULT_REPLICAS),
                orDefault(role.size(), RoleSpec.DEFAULT_SIZE),
                firstNonEmpty(role.image(), engineSpec.image()).orElseGet(() -> defaultImages.apply(engine.get())),
                firstNonEmpty(role.image(), engineSpec.image()).isEmpty(),
                orDefault(role.port(), RoleSpec.DEFAULT_PORT),
                Optional.ofNullable(role.resources()),
                listOrEmpty(role.extraArgs()),
                listOrEmpty(role.env()),
                listOrEmpty(role.command()),
                Optional.ofNullable(role.terminationGracePeriodSeconds()),
                role.nodeSelector() == null ? Map.of() : Map.copyOf(role.nodeSelector()),
                listOrEmpty(role.tolerations()),
                Duration.ofSeconds(orDefault(drainSeconds, RetirementSpec.DEFAULT_DRAIN_SECONDS)),
                orDefault(maxSurge, 0),
                role.template() == null ? new RoleTemplate(null, null) : role.template(),
                sharedMemory(role),
                role.startupSeconds() == null
                        ? DesiredRole.Setting.byDefault(Optional.of(RoleSpec.DEFAULT_STARTUP_SECONDS))
                        : DesiredRole.Setting.set(Optional.of(role.startupSeconds())),
                Optional.ofNullable(role.livenessSeconds()),
                Duration.ofSeconds(Optional.ofNullable(role.partialPlacementSeconds())
                        .orElse(RoleSpec.DEFAULT_PARTIAL_PLACEMENT_SECONDS)),
                orDefault(disruption.maxUnavailable(), DisruptionSpec.DEFAULT_MAX_UNAVAILABLE),
                maintenance.get()));
    }

    /**
     * The size the spec sets ("0" for none); unset, the default wherever a replica spans several accelerators or
     * Pods, whose engine processes exchange tensors through /dev/shm.
     */
    private static DesiredRole.Setting<String> sharedMemory(RoleSpec role) {
        if (role.sharedMemory() != null) {
            return DesiredRole.Setting.set(Optional.of(role.sharedMemory())
                    .filter(size ->
                            Quantity.getAmountInBytes(new Quantity(size)).signum() > 0));
        }
        boolean parallel = orDefault(role.size(), RoleSpec.DEFAULT_SIZE) > 1
                || ParallelDegree.of(listOrEmpty(role.extraArgs())) > 1;
        return DesiredRole.Setting.byDefault(parallel ? Optional.of(RoleSpec.DEFAULT_SHARED_MEMORY) : Optional.empty());
    }

    private static void checkSharedMemory(String field, String size, List<FieldError> errors) {
        if (size == null) {
            return;
        }
        if (size.length() > RoleSpec.MAX_QUANTITY_LENGTH) {
            errors.add(new FieldError(field, "longer than " + RoleSpec.MAX_QUANTITY_LENGTH + " characters"));
        } else if (!QUANTITY.matcher(size).matches()) {
            errors.add(new FieldError(field, "must be a quantity such as 8Gi, or \"0\" for none; got " + quote(size)));
        }
    }

    private static void checkRoleName(String field, String roleName, String mdName, List<FieldError> errors) {
        if (roleName == null || roleName.isEmpty()) {
            errors.add(new FieldError(field, "required"));
        } else if (roleName.length() > RoleSpec.MAX_NAME_LENGTH) {
            errors.add(new FieldError(field, "longer than " + RoleSpec.MAX_NAME_LENGTH + " characters"));
        } else if (!DNS_LABEL.matcher(roleName).matches()) {
            errors.add(new FieldError(
                    field, "must be a DNS label (lower-case letters, digits and '-', starting with a letter)"));
        } else if (RoleSpec.RESERVED_NAME.equals(roleName)) {
            errors.add(new FieldError(
                    field, "must not be '" + RoleSpec.RESERVED_NAME + "': the router's objects take that name"));
        } else if (RESERVED_SUFFIX.matcher(roleName).find()) {
            errors.add(new FieldError(field, "must not end in -r<digits>: that is how replica Services are named"));
        } else if (mdName != null && mdName.length() + roleName.length() > ModelDeployment.MAX_NAME_BUDGET) {
            errors.add(new FieldError(
                    field,
                    "together with metadata.name longer than " + ModelDeployment.MAX_NAME_BUDGET
                            + " characters; Pod names must stay within a 63-character DNS label"));
        }
    }

    private static void checkRange(String field, Integer value, int min, int max, List<FieldError> errors) {
        if (value != null && (value < min || value > max)) {
            errors.add(new FieldError(field, "must be between " + min + " and " + max + ", got " + value));
        }
    }

    private static void checkCount(String field, List<?> values, List<FieldError> errors) {
        if (values != null && values.size() > RoleSpec.MAX_ARGS) {
            errors.add(new FieldError(field, "at most " + RoleSpec.MAX_ARGS + " items, got " + values.size()));
        }
        if (values != null && values.stream().anyMatch(v -> v == null)) {
            errors.add(new FieldError(field, "items must not be null"));
        }
    }

    private static void checkImage(String field, String image, List<FieldError> errors) {
        if (image != null && image.length() > MAX_IMAGE) {
            errors.add(new FieldError(field, "longer than " + MAX_IMAGE + " characters"));
        }
    }

    private static FieldError unsupported(String field, String value, String choices) {
        return new FieldError(field, "unsupported value " + quote(value) + "; one of " + choices);
    }

    /** Quotes a user value for a message, bounded so that a hostile value cannot flood status or Events. */
    private static String quote(String value) {
        if (value == null) {
            return "null";
        }
        String shown = value.length() > 64 ? value.substring(0, 64) + "…" : value;
        return "\""
                + shown.replace("\\", "\\\\")
                        .replace("\"", "\\\"")
                        .replace("\n", "\\n")
                        .replace("\r", "\\r") + "\"";
    }

    private static <E> String choices(E[] values, Function<E, String> name) {
        return Arrays.stream(values).map(name).collect(Collectors.joining(", "));
    }

    /** The flag as an argument of its own, or written with its value as --flag=value. */
    /**
     * The first vLLM release that starts the members of one engine on several nodes without Ray: --nnodes, --node-rank,
     * --master-addr and --master-port are in vllm/engine/arg_utils.py from v0.11.1 (absent at v0.11.0).
     */
    static final EngineRelease VLLM_MULTI_NODE_SINCE = new EngineRelease(0, 11, 1);

    /** An argument vLLM's parser reads as --disable-log-stats, as {@link RoleSpec#GAUGES_OFF_SPELLINGS} lists them. */
    static boolean turnsGaugesOff(String arg) {
        return arg != null
                && arg.startsWith("--")
                && arg.length() >= "--disable-log-s".length()
                && "--disable-log-stats".startsWith(arg.replace('_', '-'));
    }

    private static boolean setsFlag(List<String> args, String flag) {
        return args != null && args.stream().anyMatch(a -> flag.equals(a) || a != null && a.startsWith(flag + "="));
    }

    private static boolean behindLlmD(ModelDeploymentSpec spec) {
        return spec.router() != null
                && RouterKind.LLM_D_ROUTER.wireName().equals(spec.router().name());
    }

    private static int rendezvousPort(Engine engine) {
        return engine == Engine.VLLM
                ? ModelDeploymentSpec.VLLM_RENDEZVOUS_PORT
                : ModelDeploymentSpec.SGLANG_RENDEZVOUS_PORT;
    }

    private static int orDefault(Integer value, int fallback) {
        return value == null ? fallback : value;
    }

    private static Optional<String> firstNonEmpty(String first, String second) {
        if (first != null && !first.isEmpty()) {
            return Optional.of(first);
        }
        return Optional.ofNullable(second).filter(s -> !s.isEmpty());
    }

    private static <T> List<T> listOrEmpty(List<T> values) {
        return values == null ? List.of() : List.copyOf(values);
    }
}
