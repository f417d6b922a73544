package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.ExecResult;
import dev.ebb.operator.read.Fabric8PodExec;
import dev.ebb.operator.sim.LoopbackAddresses;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator's pods/exec client through the real API server to the node's kubelet endpoint: what a command prints
 * and how it exits reach the operator as they would from a kubelet.
 */
class ClusterExecIT {
    private static final String NS = "exec";
    private static KubernetesClient admin;
    private static ClusterNode node;
    private static Pod pod;

    @BeforeAll
    static void start() throws Exception {
        ControlPlane plane = ControlPlane.shared();
        admin = plane.adminClient();
        admin.resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(NS)
                        .endMetadata()
                        .build())
                .create();
        node = ClusterNode.register(plane, admin, "node-exec", LoopbackAddresses.podNetwork());
        admin.resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("shell")
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .withNodeName(node.name())
                        .addNewContainer()
                        .withName("main")
                        .withImage("busybox")
                        .endContainer()
                        .endSpec()
                        .build())
                .create();
        await("the Pod running")
                .atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(admin.pods()
                                .inNamespace(NS)
                                .withName("shell")
                                .get()
                                .getStatus()
                                .getPhase())
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo("Running"));
        pod = admin.pods().inNamespace(NS).withName("shell").get();
    }

    @AfterAll
    static void stop() {
        node.close();
        admin.namespaces().withName(NS).delete();
        admin.close();
    }

    @Test
    void outputAndAZeroExitArrive() {
        ExecResult result = exec(List.of("sh", "-c", "printf 'busy 3'"));
        assertThat(result).isInstanceOfSatisfying(ExecResult.Exited.class, exited -> {
            assertThat(exited.code()).isZero();
            assertThat(new String(exited.stdout(), StandardCharsets.UTF_8)).isEqualTo("busy 3");
        });
    }

    @Test
    void aNonZeroExitArrivesThroughTheStatusChannel() {
        ExecResult result = exec(List.of("sh", "-c", "printf partial; exit 3"));
        assertThat(result).isInstanceOfSatisfying(ExecResult.Exited.class, exited -> {
            assertThat(exited.code()).isEqualTo(3);
            assertThat(new String(exited.stdout(), StandardCharsets.UTF_8)).isEqualTo("partial");
        });
    }

    @Test
    void outputOverTheCapIsNotRead() {
        ExecResult result = new Fabric8PodExec(admin)
                .exec(
                        pod,
                        "main",
                        List.of("sh", "-c", "head -c 100000 /dev/zero"),
                        new ExecLimits(1024, Duration.ofSeconds(20)))
                .await()
                .atMost(Duration.ofSeconds(30));
        assertThat(result).isInstanceOf(ExecResult.Overflowed.class);
    }

    @Test
    void aCommandThatDoesNotStartFailsRatherThanReadingAsOutput() {
        ExecResult result = exec(List.of("/nonexistent/binary"));
        assertThat(result).isNotInstanceOf(ExecResult.Exited.class);
    }

    /**
     * The member reads' scripts travel on stdin, which the client cannot close: the command still ends the exec, and the
     * request line, everything a proxy or an audit log sees, stays small (with the scripts in it, it was 14 to 21 KB).
     */
    @Test
    void aScriptOnStdinRunsThroughTheApiServerAndItsRequestLineStaysUnder2KiB() {
        List<String> lines = new CopyOnWriteArrayList<>();
        try (KubernetesClient recording = RequestLines.recording(admin.getConfiguration(), lines)) {
            ExecResult result = new Fabric8PodExec(recording)
                    .exec(pod, "main", ConnectionRead.command(8000, Optional.empty()), ExecLimits.CONNECTION_READ)
                    .await()
                    .atMost(Duration.ofSeconds(30));

            assertThat(ConnectionRead.interpret(result)).isInstanceOf(ConnectionRead.Peers.Connected.class);
        }
        assertThat(lines)
                .filteredOn(line -> line.contains("/exec?"))
                .singleElement()
                .satisfies(line -> assertThat(line.length()).isLessThan(2048));
    }

    private static ExecResult exec(List<String> argv) {
        return new Fabric8PodExec(admin)
                .exec(pod, "main", argv, new ExecLimits(4096, Duration.ofSeconds(20)))
                .await()
                .atMost(Duration.ofSeconds(30));
    }
}
