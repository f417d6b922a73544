package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ControlPlaneReleaseTest {
    @Test
    void theReleaseIsTheOneTheKubeModuleRequires() {
        assertThat(
                        ControlPlaneRelease.releaseIn(
                                "module x\n\nrequire (\n\tgithub.com/a/b v1.2.3 // indirect\n\tk8s.io/kubernetes v1.37.2 // indirect\n)\n"))
                .isEqualTo("1.37.2");
    }

    @Test
    void aModuleWithoutItIsAnError() {
        assertThatThrownBy(() -> ControlPlaneRelease.releaseIn("module x\n\trequire k8s.io/kubectl v0.37.2\n"))
                .hasMessageContaining("k8s.io/kubernetes");
    }

    @Test
    void binariesLieWhereKubeApiTestLooks() {
        ControlPlaneRelease release = new ControlPlaneRelease("1.37.2", Path.of("/opt/kat"));
        assertThat(release.directory()).isEqualTo(Path.of("/opt/kat/k8s/1.37.2-linux-amd64"));
    }

    @Test
    void aMissingBinaryNamesTheTargetThatBuildsIt() {
        ControlPlaneRelease release = new ControlPlaneRelease("1.37.2", Path.of("/nonexistent"));
        assertThatThrownBy(() -> release.binary("kube-scheduler"))
                .hasMessageContaining("make cluster-binaries")
                .hasMessageContaining("1.37.2");
    }

    @Test
    void thePinnedReleaseIsAtLeast133() {
        String[] parts =
                ControlPlaneRelease.pinned(Path.of("/nonexistent")).version().split("\\.");
        assertThat(Integer.parseInt(parts[1])).isGreaterThanOrEqualTo(33);
    }
}
