package dev.ebb.operator.api;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.ebb.operator.RoleTemplates;
import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.EngineSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RoleSpec;
import dev.ebb.operator.api.v1alpha1.RoleTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.stream.Stream;

/**
 * What the ModelDeployment CRD's admission refuses and lets through, as one table that runs against the test world's
 * API server and against a real kube-apiserver, so that the two cannot drift apart: each refusal with the message the
 * user reads, which names the field.
 */
public final class AdmissionCases {
    public static final String NAMESPACE = "adm";
    private static final String RESOURCE = "ModelDeployment.serving.ebb.dev";

    private AdmissionCases() {}

    /** A resource the API server must refuse, and how its message must read: whole, or ending or containing this text. */
    public record Refused(String title, Specs.Deployment shape, Match match, String message) {
        @Override
        public String toString() {
            return title;
        }

        /** Creates it through the client and checks the refusal. */
        public void checkAgainst(KubernetesClient client) {
            ModelDeployment md = shape.namespace(NAMESPACE).build();
            String said = refusal(catchThrowable(() -> client.resource(md).create()), title);
            switch (match) {
                case WHOLE -> assertThat(said).isEqualTo(message);
                case END ->
                    assertThat(said)
                            .startsWith(RESOURCE + " \"" + md.getMetadata().getName() + "\" is invalid: ")
                            .endsWith(message);
                case PART -> assertThat(said).contains(message);
            }
        }
    }

    /** The message of the 422 the API server refused a resource with; fails when it was not refused so. */
    private static String refusal(Throwable thrown, String title) {
        assertThat(thrown).as("the API server should refuse %s", title).isInstanceOf(KubernetesClientException.class);
        KubernetesClientException refused = (KubernetesClientException) thrown;
        assertThat(refused.getCode()).as("HTTP status").isEqualTo(422);
        return refused.getStatus().getMessage();
    }

    public enum Match {
        WHOLE,
        END,
        PART
    }

    /** A resource the API server must let through. */
    public record Admitted(String title, Specs.Deployment shape) {
        @Override
        public String toString() {
            return title;
        }

        public ModelDeployment checkAgainst(KubernetesClient client) {
            ModelDeployment created =
                    client.resource(shape.namespace(NAMESPACE).build()).create();
            assertThat(created.getMetadata().getUid()).isNotBlank();
            return created;
        }
    }

    public static Stream<Refused> refused() {
        return Stream.of(
                new Refused(
                        "an engine outside the enum",
                        deployment("a", "TGI").role(role("s")),
                        Match.WHOLE,
                        RESOURCE
                                + " \"a\" is invalid: [spec.engine.name: Unsupported value: \"TGI\": supported values: \"SGLang\", \"vLLM\", "
                                + "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
                                + "correct the existing errors to complete validation]"),
                new Refused(
                        "a replica of no Pods",
                        deployment("b", "vLLM").role(role("s").size(0)),
                        Match.END,
                        "spec.roles[0].size: Invalid value: 0: spec.roles[0].size in body should be greater than or equal to 1"),
                new Refused(
                        "a grace over an hour",
                        deployment("c", "vLLM").role(role("s").grace(3601)),
                        Match.END,
                        "spec.roles[0].terminationGracePeriodSeconds in body should be less than or equal to 3600"),
                new Refused(
                        "--port in extraArgs",
                        deployment("c3", "vLLM").role(role("s").extraArgs("--port=9000")),
                        Match.PART,
                        "spec.roles[0].extraArgs: Invalid value: " + RoleSpec.PORT_IN_EXTRA_ARGS),
                new Refused(
                        "--host in extraArgs",
                        deployment("c4", "vLLM").role(role("s").extraArgs("--host", "10.0.0.7")),
                        Match.PART,
                        RoleSpec.HOST_IN_EXTRA_ARGS),
                new Refused(
                        "--disable-log-stats in extraArgs",
                        deployment("c9", "vLLM").role(role("s").extraArgs("--disable-log-stats")),
                        Match.PART,
                        "spec.roles[0].extraArgs: Invalid value: " + RoleSpec.GAUGES_OFF_IN_EXTRA_ARGS),
                new Refused(
                        "--disable-log-stats abbreviated, with underscores",
                        deployment("c10", "vLLM")
                                .role(role("s").extraArgs("--max-model-len", "4096", "--disable_log_sta")),
                        Match.PART,
                        RoleSpec.GAUGES_OFF_IN_EXTRA_ARGS),
                new Refused(
                        "a multi-Pod SGLang replica on the rendezvous port",
                        deployment("c5", "SGLang").role(role("s").size(2).port(5000)),
                        Match.PART,
                        "rendezvous port on the leader"),
                new Refused(
                        "--uds in extraArgs",
                        deployment("c7", "vLLM").role(role("s").extraArgs("--uds", "/tmp/vllm.sock")),
                        Match.PART,
                        RoleSpec.UDS_IN_EXTRA_ARGS),
                new Refused(
                        "a decode role on the routing proxy's engine port",
                        deployment("c8", "vLLM")
                                .router("llm-d-router")
                                .scaling("p")
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode").port(8200)),
                        Match.PART,
                        ModelDeploymentSpec.PORT_OF_THE_PROXIED_ENGINE),
                new Refused(
                        "a drain under 30 s",
                        deployment("c2", "vLLM").role(role("s").drainSeconds(10)),
                        Match.END,
                        "spec.roles[0].retirement.drainSeconds in body should be greater than or equal to 30"),
                new Refused(
                        "node maintenance neither Protocol nor Evict",
                        deployment("c11", "vLLM").role(role("s").disruption(null, "Drain")),
                        Match.PART,
                        "spec.roles[0].disruption.nodeMaintenance: Unsupported value: \"Drain\": supported values: \"Evict\","
                                + " \"Protocol\""),
                new Refused(
                        "a negative disruption budget",
                        deployment("c12", "vLLM").role(role("s").disruption(-1, null)),
                        Match.END,
                        "spec.roles[0].disruption.maxUnavailable in body should be greater than or equal to 0"),
                new Refused(
                        "a router that does not fit the engine",
                        deployment("d", "SGLang").router("vllm-router").role(role("s")),
                        Match.END,
                        "spec.router.name: Invalid value: spec.router.name does not fit spec.engine.name: "
                                + "vllm-router serves only vLLM, sglang-gateway only SGLang, llm-d-router either"),
                new Refused(
                        "two roles of one name",
                        deployment("e", "vLLM").role(role("s")).role(role("s")),
                        Match.END,
                        "spec.roles: Invalid value: spec.roles[].name must be unique"),
                new Refused(
                        "a role name ending like a replica's",
                        deployment("f", "vLLM").role(role("server-r1")),
                        Match.PART,
                        "spec.roles[0].name: Invalid value: spec.roles[].name must not end in -r<digits>"),
                new Refused(
                        "a role named router",
                        deployment("i", "vLLM").role(role("router")),
                        Match.PART,
                        "spec.roles[0].name: Invalid value: spec.roles[].name must not be 'router'"),
                new Refused(
                        "names too long for a Pod name",
                        deployment("g".repeat(40), "vLLM").role(role("r".repeat(13))),
                        Match.PART,
                        "spec.roles: Invalid value: metadata.name and spec.roles[].name together exceed 52"),
                new Refused(
                        "no roles",
                        deployment("h", "vLLM"),
                        Match.END,
                        "spec.roles: Invalid value: 0: spec.roles in body should have at least 1 items"),
                new Refused(
                        "a bound and a rule broken at once",
                        deployment("j", "vLLM").role(role("router").size(0)),
                        Match.WHOLE,
                        RESOURCE
                                + " \"j\" is invalid: [spec.roles[0].size: Invalid value: 0: spec.roles[0].size in body should be greater than "
                                + "or equal to 1, spec.roles[0].name: Invalid value: spec.roles[].name must not be 'router': the router's objects "
                                + "take that name]"),
                new Refused(
                        "replicas over 1024",
                        deployment("k", "vLLM").role(role("s").replicas(1025)),
                        Match.WHOLE,
                        RESOURCE + " \"k\" is invalid: "
                                + "spec.roles[0].replicas: Invalid value: 1025: spec.roles[0].replicas in body should be less than or equal to 1024"),
                new Refused(
                        "eleven roles",
                        elevenRoles(deployment("l", "vLLM")),
                        Match.WHOLE,
                        RESOURCE + " \"l\" is invalid: "
                                + "[spec.roles: Too many: 11: must have at most 10 items, <nil>: Invalid value: null: some validation rules were not "
                                + "checked because the object was invalid; correct the existing errors to complete validation]"),
                new Refused(
                        "a split naming no role to scale",
                        deployment("s1", "vLLM")
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")),
                        Match.END,
                        "spec.scaling.role: Invalid value: " + ModelDeploymentSpec.SCALING_ROLE_REQUIRED),
                new Refused(
                        "a scaled role that is not a role",
                        deployment("s2", "vLLM").scaling("decode").role(role("s")),
                        Match.END,
                        "spec.scaling.role: Invalid value: " + ModelDeploymentSpec.SCALING_ROLE_UNKNOWN),
                new Refused(
                        "a template label under the operator's prefix",
                        deployment("t1", "vLLM")
                                .role(role("s")
                                        .template(RoleTemplates.withPodLabels(
                                                java.util.Map.of("serving.ebb.dev/serving", "false")))),
                        Match.END,
                        "spec.roles[0].template.pod.metadata.labels: Invalid value: " + RoleTemplate.RESERVED_LABEL),
                new Refused(
                        "a template volume named like the shared memory",
                        deployment("t2", "vLLM")
                                .role(role("s")
                                        .template(RoleTemplates.withVolumeNamed(RoleTemplate.SHARED_MEMORY_VOLUME))),
                        Match.END,
                        "spec.roles[0].template.pod.volumes: Invalid value: " + RoleTemplate.RESERVED_VOLUME),
                new Refused(
                        "a mount of its own at /dev/shm",
                        deployment("t3", "vLLM").role(role("s").template(RoleTemplates.withMountAt("/dev/shm"))),
                        Match.END,
                        "spec.roles[0].template.engineContainer.volumeMounts: Invalid value: "
                                + RoleTemplate.SHARED_MEMORY_MOUNT),
                new Refused(
                        "a shared memory size that is no quantity",
                        deployment("t4", "vLLM").role(role("s").sharedMemory("lots")),
                        Match.PART,
                        "spec.roles[0].sharedMemory: Invalid value: \"lots\": spec.roles[0].sharedMemory in body should match"),
                new Refused(
                        "a startup budget under a minute",
                        deployment("t5", "vLLM").role(role("s").startupSeconds(30)),
                        Match.END,
                        "spec.roles[0].startupSeconds: Invalid value: 30: spec.roles[0].startupSeconds in body should be greater than or equal to 60"),
                new Refused(
                        "a liveness bound over an hour",
                        deployment("t7", "vLLM").role(role("s").livenessSeconds(3601)),
                        Match.END,
                        "spec.roles[0].livenessSeconds: Invalid value: 3601: spec.roles[0].livenessSeconds in body should be less than or equal to 3600"),
                new Refused(
                        "a partial placement bound under a minute",
                        deployment("t8", "vLLM").role(role("s").size(2).partialPlacementSeconds(10)),
                        Match.END,
                        "spec.roles[0].partialPlacementSeconds: Invalid value: 10: spec.roles[0].partialPlacementSeconds in body should be"
                                + " greater than or equal to 60"),
                new Refused(
                        "extraArgs beside a command of its own",
                        deployment("x", "vLLM")
                                .role(role("s").command("/bin/engine").extraArgs(List.of("--x"))),
                        Match.END,
                        "spec.roles[0].extraArgs: Invalid value: " + RoleSpec.EXTRA_ARGS_WITH_COMMAND));
    }

    private static Specs.Deployment elevenRoles(Specs.Deployment shape) {
        for (char c = 'a'; c < 'a' + 11; c++) {
            shape.role(role("r" + c));
        }
        return shape;
    }

    public static Stream<Admitted> admitted() {
        return Stream.of(
                new Admitted(
                        "a split naming its decode role, with replicas",
                        deployment("s3", "vLLM")
                                .scaling("d", 3)
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode"))),
                new Admitted(
                        "weights on a PVC, HF_TOKEN from a Secret, identity, scheduling and 8Gi of shared memory",
                        deployment("t6", "vLLM")
                                .role(role("s")
                                        .extraArgs("--tensor-parallel-size", "2")
                                        .template(RoleTemplates.full())
                                        .sharedMemory("8Gi")
                                        .startupSeconds(5400)
                                        .livenessSeconds(120)
                                        .partialPlacementSeconds(1800))),
                new Admitted(
                        "a command of its own and no extraArgs",
                        deployment("y", "vLLM").role(role("s").command("/bin/engine"))),
                new Admitted(
                        "SGLang with its gateway, a split and a 2-Pod decode",
                        deployment("ok", "SGLang")
                                .scaling("decode")
                                .router("sglang-gateway")
                                .role(role("prefill").kind("Prefill").grace(45))
                                .role(role("decode").kind("Decode").size(2))));
    }

    /** An update that changes the engine is refused, naming the field, and the stored resource keeps its engine. */
    public static void checkEngineStaysImmutable(KubernetesClient client) {
        client.resource(deployment("imm", "vLLM")
                        .namespace(NAMESPACE)
                        .role(role("s"))
                        .build())
                .create();

        Throwable thrown = catchThrowable(() -> client.resources(ModelDeployment.class)
                .inNamespace(NAMESPACE)
                .withName("imm")
                .edit(md -> {
                    md.setSpec(new ModelDeploymentSpec(
                            md.getSpec().model(),
                            new EngineSpec("SGLang", null),
                            null,
                            md.getSpec().roles()));
                    return md;
                }));

        assertThat(thrown).isInstanceOf(KubernetesClientException.class);
        assertThat(((KubernetesClientException) thrown).getStatus().getMessage())
                .endsWith(
                        "spec.engine.name: Invalid value: spec.engine.name is immutable; create a new ModelDeployment to change engines");
        assertThat(client.resources(ModelDeployment.class)
                        .inNamespace(NAMESPACE)
                        .withName("imm")
                        .get()
                        .getSpec()
                        .engine()
                        .name())
                .isEqualTo("vLLM");
    }

    /**
     * A status write carrying the resourceVersion its writer read is refused with 409 once another writer has changed
     * the object, as the API server's optimistic concurrency does for the status subresource too
     * (k8s.io/apiserver, pkg/registry/generic/registry/store.go, Update): the operator's fence rests on it.
     */
    public static void checkStaleStatusWriteIsRefused(KubernetesClient client) {
        client.resource(deployment("stale", "vLLM")
                        .namespace(NAMESPACE)
                        .role(role("s"))
                        .build())
                .create();
        ModelDeployment read = client.resources(ModelDeployment.class)
                .inNamespace(NAMESPACE)
                .withName("stale")
                .get();
        // a merge patch carries no resourceVersion, so a write of the operator's meanwhile cannot refuse it
        client.resources(ModelDeployment.class)
                .inNamespace(NAMESPACE)
                .withName("stale")
                .patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        "{\"metadata\":{\"annotations\":{\"example.com/touched\":\"by another writer\"}}}");

        ModelDeployment stale = client.getKubernetesSerialization().clone(read);
        stale.setStatus(new ModelDeploymentStatus(1L, "Progressing", null, null, null, null, null, null, null));
        Throwable thrown = catchThrowable(() -> client.resource(stale).updateStatus());

        assertThat(thrown).isInstanceOf(KubernetesClientException.class);
        assertThat(((KubernetesClientException) thrown).getCode()).isEqualTo(409);
        client.resources(ModelDeployment.class)
                .inNamespace(NAMESPACE)
                .withName("stale")
                .delete();
    }

    /** A JSON patch that does not apply to the object (it replaces a field that is not there) is refused with 422. */
    public static void checkUnappliableJsonPatchIsRefused(KubernetesClient client) {
        client.resource(deployment("unpatched", "vLLM")
                        .namespace(NAMESPACE)
                        .role(role("s"))
                        .build())
                .create();

        Throwable thrown = catchThrowable(() -> client.resources(ModelDeployment.class)
                .inNamespace(NAMESPACE)
                .withName("unpatched")
                .patch(
                        PatchContext.of(PatchType.JSON),
                        "[{\"op\":\"replace\",\"path\":\"/metadata/labels/absent\",\"value\":\"x\"}]"));

        assertThat(thrown).isInstanceOf(KubernetesClientException.class);
        assertThat(((KubernetesClientException) thrown).getCode()).isEqualTo(422);
        client.resources(ModelDeployment.class)
                .inNamespace(NAMESPACE)
                .withName("unpatched")
                .delete();
    }

    /** A shape that a router cannot serve, or can; the field a refusal names, or null when it is admitted. */
    public record RouterShape(String title, Specs.Deployment shape, String refusedField) {
        @Override
        public String toString() {
            return title;
        }

        /** The API server and the operator's own checks agree on it; what was admitted is deleted again. */
        public void checkAgainst(KubernetesClient client) {
            ModelDeployment md = shape.namespace(NAMESPACE).build();
            Throwable thrown = catchThrowable(() -> client.resource(md).create());
            boolean operatorRefuses = Specs.RESOLVER.resolve(md) instanceof Resolution.Rejected;

            if (refusedField == null) {
                assertThat(thrown).isNull();
                assertThat(operatorRefuses).isFalse();
                client.resources(ModelDeployment.class)
                        .inNamespace(NAMESPACE)
                        .withName(md.getMetadata().getName())
                        .delete();
            } else {
                assertThat(refusal(thrown, title)).contains(refusedField);
                assertThat(operatorRefuses).isTrue();
            }
        }
    }

    public static Stream<RouterShape> routerShapes() {
        return Stream.of(
                new RouterShape(
                        "vllm-router, roles on two ports",
                        deployment("md", "vLLM")
                                .router("vllm-router")
                                .role(role("a"))
                                .role(role("b").port(9000)),
                        "spec.roles[].port"),
                new RouterShape(
                        "sglang-gateway, one role on the default port and one on its own",
                        deployment("md", "SGLang")
                                .router("sglang-gateway")
                                .role(role("a").port(8000))
                                .role(role("b").port(8001)),
                        "spec.roles[].port"),
                new RouterShape(
                        "vllm-router, a Server role beside a split",
                        deployment("md", "vLLM")
                                .router("vllm-router")
                                .role(role("s"))
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")),
                        "spec.roles[].kind"),
                new RouterShape(
                        "sglang-gateway, prefill without decode",
                        deployment("md", "SGLang")
                                .router("sglang-gateway")
                                .role(role("p").kind("Prefill")),
                        "spec.roles[].kind"),
                new RouterShape(
                        "vllm-router, a split on one port",
                        deployment("md", "vLLM")
                                .router("vllm-router")
                                .scaling("d")
                                .role(role("p").kind("Prefill").port(8100))
                                .role(role("d").kind("Decode").port(8100)),
                        null),
                new RouterShape(
                        "sglang-gateway, Server roles on the default port, one of them explicitly",
                        deployment("md", "SGLang")
                                .router("sglang-gateway")
                                .role(role("a"))
                                .role(role("b").port(8000).kind("Server")),
                        null),
                new RouterShape(
                        "no router, roles on two ports and a lone prefill role",
                        deployment("md", "vLLM")
                                .scaling("b")
                                .role(role("p").kind("Prefill"))
                                .role(role("b").port(9000)),
                        null),
                new RouterShape(
                        "a Prefill/Decode split naming no role to scale",
                        deployment("md", "vLLM")
                                .router("llm-d-router")
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")),
                        "spec.scaling.role: Invalid value: " + ModelDeploymentSpec.SCALING_ROLE_REQUIRED),
                new RouterShape(
                        "a scaled role that is not one of the roles",
                        deployment("md", "vLLM").scaling("decode").role(role("server")),
                        "spec.scaling.role: Invalid value: " + ModelDeploymentSpec.SCALING_ROLE_UNKNOWN),
                new RouterShape(
                        "a split naming its decode role, with replicas for the autoscaler",
                        deployment("md", "SGLang")
                                .router("sglang-gateway")
                                .scaling("d", 2)
                                .role(role("p").kind("Prefill"))
                                .role(role("d").kind("Decode")),
                        null));
    }
}
