package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.packaging.MakeCommand;
import dev.ebb.operator.packaging.PackagedOperator;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The install a user runs, `make install` (which `make deploy` runs after its build), applied with the control plane's
 * own kubectl to the real API server, and where `make run` goes with that cluster's kubeconfig or an unreachable one.
 */
class ClusterInstallIT {
    private static ControlPlane plane;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() {
        plane = ControlPlane.shared();
        admin = plane.adminClient();
    }

    @AfterAll
    static void close() {
        admin.close();
    }

    private static Map<String, String> kubeconfig(Path kubeconfig) {
        Map<String, String> env = new HashMap<>();
        env.put("KUBECONFIG", kubeconfig.toString());
        env.put("KUBECTL", plane.release().binary("kubectl").toString());
        env.put("SANDBOX", null);
        return env;
    }

    @Test
    void theInstallTheReadmeGivesAppliesAsItIsToARealApiServer() throws Exception {
        MakeCommand install = MakeCommand.run(kubeconfig(plane.adminKubeconfig()), "install");

        assertThat(install.exitCode()).as(install.output()).isZero();
        CustomResourceDefinition crd = admin.apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName("modeldeployments.serving.ebb.dev")
                .get();
        assertThat(crd.getStatus().getConditions())
                .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
        Deployment operator =
                admin.apps().deployments().inNamespace(PackagedOperator.NAMESPACE).list().getItems().stream()
                        .filter(d -> d.getMetadata().getName().startsWith("ebb-operator"))
                        .findFirst()
                        .orElseThrow();
        assertThat(operator.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getImagePullPolicy())
                .isEqualTo("IfNotPresent");

        MakeCommand again = MakeCommand.run(kubeconfig(plane.adminKubeconfig()), "install");
        assertThat(again.exitCode())
                .as("applied a second time, as after an upgrade: " + again.output())
                .isZero();
        admin.resource(operator).delete();
    }

    @Test
    void runGoesToTheClusterOfAKubeconfigThatAnswers() throws Exception {
        assertThat(MakeCommand.run(kubeconfig(plane.adminKubeconfig()), "where")
                        .output()
                        .trim())
                .isEqualTo("cluster");
    }

    @Test
    void runGoesToTheSandboxWhenTheKubeconfigsClusterDoesNotAnswer() throws Exception {
        Path kubeconfig = Files.createTempFile("unreachable", ".kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]
                contexts: [{name: gone, context: {cluster: gone, user: someone}}]
                current-context: gone
                users: [{name: someone, user: {token: not-a-secret}}]
                """);
        try {
            String where =
                    MakeCommand.run(kubeconfig(kubeconfig), "where").output().trim();

            assertThat(where).startsWith("sandbox: the cluster of " + kubeconfig + " does not answer (");
        } finally {
            Files.delete(kubeconfig);
        }
    }
}
