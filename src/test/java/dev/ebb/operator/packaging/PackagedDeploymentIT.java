package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The operator's own Deployment, as `package` writes it: unprivileged, given time to finish its work when stopped, and
 * given the memory its JVM flags need.
 */
class PackagedDeploymentIT {
    private static PodSpec operatorPod() throws Exception {
        return PackagedManifests.read().stream()
                .filter(Deployment.class::isInstance)
                .map(Deployment.class::cast)
                .filter(d -> d.getMetadata().getName().equals("ebb-operator"))
                .findFirst()
                .orElseThrow()
                .getSpec()
                .getTemplate()
                .getSpec();
    }

    @Test
    void theOperatorRunsAsNonRootOnAReadOnlyRootFilesystemWithNoCapabilities() throws Exception {
        PodSpec pod = operatorPod();
        Container operator = pod.getContainers().get(0);

        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(operator.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(operator.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(operator.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(operator.getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
        assertThat(pod.getTerminationGracePeriodSeconds()).isEqualTo(30L);
    }

    private static final Pattern MAX_HEAP = Pattern.compile("^-Xmx(\\d+)m$");
    /** What the JVM holds beside its heap once the operator runs: metaspace, shared classes, code, threads, its own code. */
    private static final long OUTSIDE_THE_HEAP_MIB = 128;

    private static long maxHeapMiB() throws Exception {
        return Files.readAllLines(PackagedOperator.JVM_OPTIONS).stream()
                .map(String::strip)
                .map(MAX_HEAP::matcher)
                .filter(Matcher::matches)
                .mapToLong(m -> Long.parseLong(m.group(1)))
                .reduce((a, b) -> b)
                .orElseThrow();
    }

    private static long mebibytes(Quantity quantity) {
        return Quantity.getAmountInBytes(quantity).longValue() / (1024 * 1024);
    }

    @Test
    void theOperatorsMemoryLimitHoldsItsHeapAndWhatTheJvmKeepsBesideIt() throws Exception {
        Container operator = operatorPod().getContainers().get(0);
        long limit = mebibytes(operator.getResources().getLimits().get("memory"));
        long request = mebibytes(operator.getResources().getRequests().get("memory"));

        assertThat(limit)
                .as("the limit against -Xmx in " + PackagedOperator.JVM_OPTIONS)
                .isGreaterThanOrEqualTo(maxHeapMiB() + OUTSIDE_THE_HEAP_MIB);
        assertThat(request).isPositive().isLessThanOrEqualTo(limit);
        assertThat(operator.getResources().getRequests()).containsKey("cpu");
    }

    @Test
    void theImageStartsTheJvmWithTheSameFlagsAsEveryOtherStart() throws Exception {
        String dockerfile = Files.readString(Path.of("src", "main", "docker", "Dockerfile.jvm"));

        assertThat(dockerfile)
                .contains("COPY " + PackagedOperator.JVM_OPTIONS + " /deployments/")
                .contains("WORKDIR /deployments")
                .contains("ENTRYPOINT [\"java\", \"@jvm.options\", \"-jar\", \"quarkus-run.jar\"]");
    }
}
