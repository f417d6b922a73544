package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ebb.operator.api.AdmissionCases;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.packaging.BundleWriter;
import dev.ebb.operator.reconcile.HeldBack;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The admission table the test world's API server passes, against a real kube-apiserver: its OpenAPI schema and CEL
 * rules compiled, cost-checked and enforced by the server itself, each refusal naming the field.
 */
class ClusterAdmissionIT {
    private static final Path BUNDLED_CRD = Path.of("bundle", "manifests", "modeldeployments.serving.ebb.dev.crd.yaml");
    private static KubernetesClient admin;

    @BeforeAll
    static void install() {
        admin = ControlPlane.shared().adminClient();
        ClusterCrd.install(admin);
        admin.resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(AdmissionCases.NAMESPACE)
                        .endMetadata()
                        .build())
                .create();
    }

    @AfterAll
    static void close() {
        admin.namespaces().withName(AdmissionCases.NAMESPACE).delete();
        admin.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.ebb.operator.api.AdmissionCases#refused")
    void refusesWhatTheTestWorldRefusesWithTheSameMessage(AdmissionCases.Refused refused) {
        refused.checkAgainst(admin);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.ebb.operator.api.AdmissionCases#admitted")
    void admitsWhatTheTestWorldAdmits(AdmissionCases.Admitted admitted) {
        admitted.checkAgainst(admin);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.ebb.operator.api.AdmissionCases#routerShapes")
    void refusesWhatTheOperatorCannotRoute(AdmissionCases.RouterShape shape) {
        shape.checkAgainst(admin);
    }

    @Test
    void theOlmBundlesCrdAppliedOverTheInstalledOneChangesNothing() throws Exception {
        CustomResourceDefinition installed = ClusterCrd.install(admin);
        CustomResourceDefinition bundled =
                Serialization.unmarshal(Files.readString(BUNDLED_CRD), CustomResourceDefinition.class);

        CustomResourceDefinition after =
                admin.resource(bundled).fieldManager("olm").forceConflicts().serverSideApply();

        assertThat(after.getMetadata().getGeneration())
                .as("a spec OLM would change")
                .isEqualTo(installed.getMetadata().getGeneration());
        assertThat(after.getSpec()).isEqualTo(installed.getSpec());
    }

    /** What the operator relies on to hold a released replica back: a gate set at creation, lifted by its edit, never added later. */
    @Test
    void aSchedulingGateIsSetAtCreationLiftedByTheOperatorsEditAndNeverAddedLater() {
        Pod plain = new PodBuilder()
                .withNewMetadata()
                .withName("gated")
                .withNamespace(AdmissionCases.NAMESPACE)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("main")
                .withImage("busybox")
                .endContainer()
                .endSpec()
                .build();
        Pod created = admin.resource(HeldBack.gated(plain, Instant.now())).create();
        try {
            assertThat(created.getStatus().getConditions())
                    .as("what the API server says of a gated Pod")
                    .anySatisfy(c -> assertThat(List.of(c.getType(), c.getStatus(), c.getReason()))
                            .containsExactly("PodScheduled", "False", "SchedulingGated"));

            Pod lifted = admin.pods()
                    .inNamespace(AdmissionCases.NAMESPACE)
                    .withName("gated")
                    .edit(HeldBack::lifted);

            assertThat(lifted.getSpec().getSchedulingGates()).isEmpty();
            // unconditional, so that only the rule on gates can refuse it
            assertThatThrownBy(() -> admin.pods()
                            .inNamespace(AdmissionCases.NAMESPACE)
                            .withName("gated")
                            .patch(
                                    PatchContext.of(PatchType.JSON),
                                    "[{\"op\":\"add\",\"path\":\"/spec/schedulingGates\",\"value\":[{\"name\":\""
                                            + HeldBack.GATE + "\"}]}]"))
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("schedulingGates");
        } finally {
            admin.pods()
                    .inNamespace(AdmissionCases.NAMESPACE)
                    .withName("gated")
                    .withGracePeriod(0)
                    .delete();
        }
    }

    @Test
    void keepsTheEngineImmutable() {
        AdmissionCases.checkEngineStaysImmutable(admin);
    }

    @Test
    void refusesAStatusWriteFromAStaleRead() {
        AdmissionCases.checkStaleStatusWriteIsRefused(admin);
    }

    @Test
    void refusesAJsonPatchThatDoesNotApply() {
        AdmissionCases.checkUnappliableJsonPatchIsRefused(admin);
    }

    @Test
    void admitsEverySample() throws Exception {
        for (String sample : BundleWriter.sampleDeployments()) {
            ModelDeployment md = Serialization.unmarshal(sample, ModelDeployment.class);
            md.getMetadata().setNamespace(AdmissionCases.NAMESPACE);
            assertThat(admin.resource(md).create().getMetadata().getUid())
                    .as(md.getMetadata().getName())
                    .isNotBlank();
            admin.resource(md).delete();
        }
    }
}
