package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the user is told while a router's Pods move to the images the operator now renders. */
class RouterRolloutTest {
    private static Deployment rendered(String picker, String envoy) {
        return new DeploymentBuilder()
                .withNewSpec()
                .withNewTemplate()
                .withNewSpec()
                .addNewContainer()
                .withName("epp")
                .withImage(picker)
                .endContainer()
                .addNewContainer()
                .withName("envoy-proxy")
                .withImage(envoy)
                .endContainer()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    private static Pod pod(String picker, String envoy, boolean leaving) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("qwen-router-x")
                .withDeletionTimestamp(leaving ? "2026-12-03T08:00:00Z" : null)
                .endMetadata()
                .withSpec(rendered(picker, envoy).getSpec().getTemplate().getSpec())
                .build();
    }

    @Test
    void podsOnOtherImagesAreCountedAndLeavingOnesAreNot() {
        Deployment now = rendered("epp:v0.10.0", "envoy:v1.33.2");

        assertThat(RouterRollout.behind(List.of(pod("epp:v0.10.0", "envoy:v1.33.2", false)), now))
                .isZero();
        assertThat(RouterRollout.behind(
                        List.of(
                                pod("epp:v0.10.0", "envoy:distroless-v1.33.2", false),
                                pod("epp:v0.9.0", "envoy:v1.33.2", false),
                                pod("epp:v0.9.0", "envoy:distroless-v1.33.2", true),
                                pod("epp:v0.10.0", "envoy:v1.33.2", false)),
                        now))
                .isEqualTo(2);
        assertThat(RouterRollout.behind(
                        List.of(new PodBuilder()
                                .withNewMetadata()
                                .withName("bare")
                                .endMetadata()
                                .build()),
                        now))
                .as("a Pod whose spec cannot be read runs nothing the operator renders")
                .isEqualTo(1);
    }

    @Test
    void aNewRenderingThatChangesAnImageIsToldWithWhatChangesAndHowTheRouterRolls() {
        assertThat(RouterRollout.imagesChange(Optional.empty(), rendered("epp:v0.10.0", "envoy:v1.33.2")))
                .as("the first rendering")
                .isEmpty();
        assertThat(RouterRollout.imagesChange(
                        Optional.of(rendered("epp:v0.10.0", "envoy:v1.33.2")),
                        rendered("epp:v0.10.0", "envoy:v1.33.2")))
                .isEmpty();
        assertThat(RouterRollout.imagesChange(
                        Optional.of(rendered("epp:v0.10.0", "envoy:distroless-v1.33.2")),
                        rendered("epp:v0.10.0", "envoy:v1.33.2")))
                .contains(
                        "router images change: envoy-proxy envoy:distroless-v1.33.2 -> envoy:v1.33.2; router Pods are replaced one at a"
                                + " time, each new one ready before an old one leaves and each old one finishing its streams first");
    }
}
