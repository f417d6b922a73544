package dev.ebb.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Map;

/** A set of identical replicas; each replica is {@code size} Pods, member 0 being the leader. */
@ValidationRule(
        value = "self.name != '" + RoleSpec.RESERVED_NAME + "'",
        message = "spec.roles[].name must not be '" + RoleSpec.RESERVED_NAME + "': the router's objects take that name",
        fieldPath = ".name")
@ValidationRule(
        value = "!self.name.matches('" + RoleSpec.RESERVED_SUFFIX + "')",
        message = "spec.roles[].name must not end in -r<digits>: that is how replica Services are named",
        fieldPath = ".name")
@ValidationRule(
        value = "!(has(self.command) && size(self.command) > 0 && has(self.extraArgs) && size(self.extraArgs) > 0)",
        message = RoleSpec.EXTRA_ARGS_WITH_COMMAND,
        fieldPath = ".extraArgs")
@ValidationRule(
        value = "!has(self.extraArgs) || !self.extraArgs.exists(a, a == '--port' || a.startsWith('--port='))",
        message = RoleSpec.PORT_IN_EXTRA_ARGS,
        fieldPath = ".extraArgs")
@ValidationRule(
        value = "!has(self.extraArgs) || !self.extraArgs.exists(a, a == '--host' || a.startsWith('--host='))",
        message = RoleSpec.HOST_IN_EXTRA_ARGS,
        fieldPath = ".extraArgs")
@ValidationRule(
        value = "!has(self.extraArgs) || !self.extraArgs.exists(a, a == '--uds' || a.startsWith('--uds='))",
        message = RoleSpec.UDS_IN_EXTRA_ARGS,
        fieldPath = ".extraArgs")
@ValidationRule(
        value = "!has(self.extraArgs) || !self.extraArgs.exists(a, a in " + RoleSpec.GAUGES_OFF_SPELLINGS + ")",
        message = RoleSpec.GAUGES_OFF_IN_EXTRA_ARGS,
        fieldPath = ".extraArgs")
public record RoleSpec(
        @Required
        @Size(min = 1, max = RoleSpec.MAX_NAME_LENGTH)
        @Pattern(RoleSpec.NAME_PATTERN)
        @JsonPropertyDescription("DNS label naming the role; part of every Pod and Service name.")
        String name,

        @SchemaFrom(type = RoleKind.class) @JsonPropertyDescription("Server (default), Prefill or Decode.")
        String kind,

        @Min(RoleSpec.MIN_REPLICAS)
        @Max(RoleSpec.MAX_REPLICAS)
        @JsonPropertyDescription("Replicas of this role; " + RoleSpec.DEFAULT_REPLICAS + " when unset.")
        Integer replicas,

        @Min(RoleSpec.MIN_SIZE)
        @Max(RoleSpec.MAX_SIZE)
        @JsonPropertyDescription(
                "Pods per replica; " + RoleSpec.DEFAULT_SIZE + " when unset. Member 0 leads and serves the API.")
        Integer size,

        @Size(max = 512) @JsonPropertyDescription("Image for this role, overriding spec.engine.image.")
        String image,

        @Min(1)
        @Max(65535)
        @JsonPropertyDescription("Engine API and metrics port; " + RoleSpec.DEFAULT_PORT + " when unset.")
        Integer port,

        ResourceRequirements resources,

        @Size(max = RoleSpec.MAX_ARGS) @JsonPropertyDescription("Appended to the command line the operator builds.")
        List<String> extraArgs,

        List<EnvVar> env,

        @Size(max = RoleSpec.MAX_ARGS)
        @JsonPropertyDescription(
                "Replaces the whole command line. The operator then cannot drain the engine: no hook, no metrics.")
        List<String> command,

        @Min(RoleSpec.MIN_GRACE_SECONDS)
        @Max(RoleSpec.MAX_GRACE_SECONDS)
        @JsonPropertyDescription(
                "Grace on every delete, " + RoleSpec.MIN_GRACE_SECONDS + ".." + RoleSpec.MAX_GRACE_SECONDS + "; "
                        + RoleSpec.DEFAULT_GRACE_SECONDS
                        + " when unset. Bounds how long a leaving replica may finish its requests.")
        Integer terminationGracePeriodSeconds,

        Map<String, String> nodeSelector,
        List<Toleration> tolerations,
        RetirementSpec retirement,
        RolloutSpec rollout,

        @JsonPropertyDescription(
                "The Pods' own settings and the engine container's: volumes and mounts, envFrom, pull secrets,"
                        + " ServiceAccount, scheduling, security contexts, labels and annotations.")
        RoleTemplate template,

        @Size(max = RoleSpec.MAX_QUANTITY_LENGTH)
        @Pattern(RoleSpec.QUANTITY_PATTERN)
        @JsonPropertyDescription(
                "Size of the memory-backed volume at /dev/shm, which engines need for tensor or pipeline parallelism"
                        + " (e.g. 8Gi); \"0\" for none. Unset: " + RoleSpec.DEFAULT_SHARED_MEMORY
                        + " where the role runs several GPUs or Pods"
                        + " per replica, none otherwise.")
        String sharedMemory,

        @Min(RoleSpec.MIN_STARTUP_SECONDS)
        @Max(RoleSpec.MAX_STARTUP_SECONDS)
        @JsonPropertyDescription(
                "How long the engine may take to load its model before the kubelet restarts it, 60..86400; "
                        + RoleSpec.DEFAULT_STARTUP_SECONDS + " when unset.")
        Integer startupSeconds,

        @Min(RoleSpec.MIN_LIVENESS_SECONDS)
        @Max(RoleSpec.MAX_LIVENESS_SECONDS)
        @JsonPropertyDescription(
                "How long a loaded engine may leave its health endpoint unanswered before the kubelet restarts it,"
                        + " 10..3600; unset, it is never restarted for that. A restart ends every generation the engine carries.")
        Integer livenessSeconds,

        @Min(RoleSpec.MIN_PARTIAL_PLACEMENT_SECONDS)
        @Max(RoleSpec.MAX_PARTIAL_PLACEMENT_SECONDS)
        @JsonPropertyDescription(
                "How long a replica of several Pods may keep the members the scheduler placed while it finds no"
                        + " room for the rest, 60..86400; " + RoleSpec.DEFAULT_PARTIAL_PLACEMENT_SECONDS
                        + " when unset. Then the"
                        + " replica's Pods are deleted, giving their nodes' accelerators back, and created again as long after, held"
                        + " back from the scheduler meanwhile. Changing it restarts no Pod.")
        Integer partialPlacementSeconds,

        DisruptionSpec disruption) {

    /** Said by admission and by the operator alike: arguments that would be dropped are refused, not ignored. */
    public static final String EXTRA_ARGS_WITH_COMMAND =
            "spec.roles[].extraArgs cannot be combined with spec.roles[].command, which replaces the whole command line";
    /** The port the command line ends with is the one the probe, the scrape annotations, the hook and the reads must use. */
    public static final String PORT_IN_EXTRA_ARGS =
            "spec.roles[].extraArgs must not set --port: the engine listens on spec.roles[].port,"
                    + " which its probe, scrape annotations, drain hook and member reads all use; set the port there";
    /** The hook and the reads reach the engine on 127.0.0.1, and clients on the Pod's address: only all addresses serve both. */
    public static final String HOST_IN_EXTRA_ARGS =
            "spec.roles[].extraArgs must not set --host: the operator has the engine listen on"
                    + " every address (0.0.0.0), since clients reach it on the Pod's address and its drain hook and reads on 127.0.0.1";
    /**
     * vLLM's frontend serves a Unix socket instead of its port with --uds, host and port then ignored (`vllm serve`
     * Frontend arguments, docs.vllm.ai/en/v0.12.0/cli/serve/): nothing would reach it where the probe, the hook and the
     * reads look. (TLS flags are followed instead: the engine profiles' tlsFlags turn them all to HTTPS.)
     */
    public static final String UDS_IN_EXTRA_ARGS =
            "spec.roles[].extraArgs must not set --uds: the engine would serve a Unix socket"
                    + " instead of spec.roles[].port, where its clients, probe, drain hook and member reads reach it";
    /**
     * vLLM with --disable-log-stats builds no Prometheus stat logger, so its page lacks vllm:num_requests_running and
     * vllm:num_requests_waiting (vllm/v1/engine/async_llm.py, log_stats, at v0.11.0 and v0.33.0): no read could find the
     * engine idle.
     */
    public static final String GAUGES_OFF_IN_EXTRA_ARGS =
            "spec.roles[].extraArgs must not set --disable-log-stats: vLLM then"
                    + " publishes no vllm:num_requests_running or vllm:num_requests_waiting, so the drain hook and the member reads could"
                    + " never see the engine idle; every scale-down would wait out its drain budget and every deleted Pod its grace";
    /**
     * Every spelling vLLM's parser takes for it: underscores for dashes in the name (FlexibleArgumentParser,
     * vllm/utils/argparse_utils.py at v0.33.0) and any unambiguous prefix (argparse's allow_abbrev; --disable-log-
     * is shared with --disable-log-requests). As a store_true flag it takes no "=value". Literal, so the API server's
     * CEL cost stays that of a comparison.
     */
    public static final String GAUGES_OFF_SPELLINGS =
            "['--disable-log-s', '--disable-log_s', '--disable_log-s', '--disable_log_s',"
                    + " '--disable-log-st', '--disable-log_st', '--disable_log-st', '--disable_log_st',"
                    + " '--disable-log-sta', '--disable-log_sta', '--disable_log-sta', '--disable_log_sta',"
                    + " '--disable-log-stat', '--disable-log_stat', '--disable_log-stat', '--disable_log_stat',"
                    + " '--disable-log-stats', '--disable-log_stats', '--disable_log-stats', '--disable_log_stats']";

    public static final String NAME_PATTERN = "^[a-z]([-a-z0-9]*[a-z0-9])?$";
    /** Role names ending like this would collide with the headless Service of another role's replica. */
    /** A role may not take this name: the router's Deployment and Service are named after it. */
    public static final String RESERVED_NAME = "router";

    public static final String RESERVED_SUFFIX = "-r[0-9]+$";
    /** Leaves room for the deployment name and "-r1023-m63" inside a 63-character DNS label. */
    public static final int MAX_NAME_LENGTH = 20;

    public static final int MIN_REPLICAS = 0;
    public static final int MAX_REPLICAS = 1024;
    public static final int MIN_SIZE = 1;
    public static final int MAX_SIZE = 64;
    public static final int MIN_GRACE_SECONDS = 15;
    /** Kubernetes' own default for a Pod's terminationGracePeriodSeconds, which the role keeps. */
    public static final int DEFAULT_GRACE_SECONDS = 30;

    public static final int DEFAULT_REPLICAS = 1;
    public static final int DEFAULT_SIZE = 1;
    public static final int DEFAULT_PORT = 8000;
    public static final int MAX_GRACE_SECONDS = 3600;
    public static final int MAX_ARGS = 256;
    /** vLLM's own Kubernetes guide mounts 2Gi at /dev/shm for tensor parallelism (docs.vllm.ai, v0.6.3, deploying_with_k8s). */
    public static final String DEFAULT_SHARED_MEMORY = "2Gi";

    public static final int MAX_QUANTITY_LENGTH = 32;
    /**
     * A non-negative Kubernetes quantity in its plain and suffixed forms (k8s.io/apimachinery, pkg/api/resource/quantity.go),
     * without the exponent form: "1e99999999" would make reading its value take ever.
     */
    public static final String QUANTITY_PATTERN = "^(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))([KMGTPE]i|[numkMGTPE])?$";

    public static final int MIN_STARTUP_SECONDS = 60;
    public static final int MAX_STARTUP_SECONDS = 86_400;
    /** An hour: a model of several hundred GB read from network storage loads in tens of minutes. */
    public static final int DEFAULT_STARTUP_SECONDS = 3_600;

    public static final int MIN_LIVENESS_SECONDS = 10;
    public static final int MAX_LIVENESS_SECONDS = 3_600;
    public static final int MIN_PARTIAL_PLACEMENT_SECONDS = 60;
    public static final int MAX_PARTIAL_PLACEMENT_SECONDS = 86_400;
    /** Long enough for a cluster autoscaler to bring a GPU node up for the waiting members, short enough not to idle a node for an hour. */
    public static final int DEFAULT_PARTIAL_PLACEMENT_SECONDS = 900;
}
