package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Test;

/** The operator's own Deployment, as `package` writes it: unprivileged, and given time to finish its work when stopped. */
class PackagedDeploymentIT {
    private static PodSpec operatorPod() throws Exception {
        return PackagedManifests.read().stream().filter(Deployment.class::isInstance).map(Deployment.class::cast)
                .filter(d -> d.getMetadata().getName().equals("ebb-operator")).findFirst().orElseThrow()
                .getSpec().getTemplate().getSpec();
    }

    @Test
    void theOperatorRunsAsNonRootOnAReadOnlyRootFilesystemWithNoCapabilities() throws Exception {
        PodSpec pod = operatorPod();
        Container operator = pod.getContainers().get(0);

        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(operator.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(operator.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(operator.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(operator.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
        assertThat(pod.getTerminationGracePeriodSeconds()).isEqualTo(30L);
    }
}
