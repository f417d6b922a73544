package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class SimKubeletTest {
    static final String NS = "sim";
    KubernetesClient client;
    private SimKubelet kubelet;

    @BeforeEach
    void start() {
        kubelet = new SimKubelet(client, new LoopbackAddresses());
    }

    @AfterEach
    void stop() {
        kubelet.close();
    }

    static Pod enginePod(String name, Long grace, List<String> preStop) {
        PodBuilder pod = new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewSpec()
                    .withTerminationGracePeriodSeconds(grace)
                    .addNewContainer().withName("main").withImage("vllm")
                        .withCommand("vllm", "serve", "m", "--served-model-name", "m", "--host", "0.0.0.0", "--port", "8000")
                        .addNewPort().withContainerPort(8000).endPort()
                    .endContainer()
                .endSpec();
        if (preStop != null) {
            pod.editSpec().editFirstContainer().withNewLifecycle().withNewPreStop().withNewExec().withCommand(preStop)
                    .endExec().endPreStop().endLifecycle().endContainer().endSpec();
        }
        return pod.build();
    }

    private Pod fetch(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private void awaitRunning(String name) {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            Pod pod = fetch(name);
            assertThat(pod.getStatus()).isNotNull();
            assertThat(pod.getStatus().getPhase()).isEqualTo("Running");
        });
    }

    private Termination terminationOf(String name) {
        return kubelet.terminations().stream().filter(t -> t.pod().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void bindsThePodReportsItReadyAndStartsItsEngine() {
        client.resource(enginePod("a", null, null)).create();

        awaitRunning("a");
        Pod pod = fetch("a");
        assertThat(pod.getMetadata().getFinalizers()).contains(SimKubelet.FINALIZER);
        assertThat(pod.getStatus().getPodIP()).startsWith("127.0.");
        assertThat(pod.getStatus().getConditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("Ready");
            assertThat(c.getStatus()).isEqualTo("True");
        });
        assertThat(pod.getStatus().getContainerStatuses()).singleElement().satisfies(c -> {
            assertThat(c.getContainerID()).startsWith("sim://");
            assertThat(c.getRestartCount()).isZero();
            assertThat(c.getState().getRunning().getStartedAt()).isNotNull();
        });
        assertThat(kubelet.engine(NS, "a")).hasValueSatisfying(e -> assertThat(e.host()).isEqualTo(pod.getStatus().getPodIP()));
    }

    @Test
    void deleteLeavesThePodTerminatingUntilTheHookAndEngineAreDone() {
        client.resource(enginePod("b", 10L, List.of("python3", "-c", "import time; time.sleep(2)"))).create();
        awaitRunning("b");

        client.pods().inNamespace(NS).withName("b").delete();

        assertThat(fetch("b").getMetadata().getDeletionTimestamp()).isNotNull();
        await().atMost(Duration.ofSeconds(8)).until(() -> fetch("b") == null);
        Termination t = terminationOf("b");
        assertThat(t.hook()).hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(1900), Duration.ofMillis(3500)));
        assertThat(t.sigterm()).isGreaterThanOrEqualTo(t.hook().orElseThrow());
        assertThat(t.killed()).isFalse();
    }

    @Test
    void hookThatOverrunsTheGraceIsCutAndTheEngineKilledTwoSecondsLater() {
        client.resource(enginePod("c", 3L, List.of("python3", "-c", "import time; time.sleep(30)"))).create();
        awaitRunning("c");

        client.pods().inNamespace(NS).withName("c").delete();

        await().atMost(Duration.ofSeconds(10)).until(() -> fetch("c") == null);
        Termination t = terminationOf("c");
        assertThat(t.hook()).hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(2900), Duration.ofMillis(3800)));
        assertThat(t.exited()).isLessThan(Duration.ofMillis(5800));
    }

    @Test
    void podWithoutHookGetsSigtermAtOnce() {
        client.resource(enginePod("d", 30L, null)).create();
        awaitRunning("d");

        client.pods().inNamespace(NS).withName("d").delete();

        await().atMost(Duration.ofSeconds(5)).until(() -> fetch("d") == null);
        assertThat(terminationOf("d").sigterm()).isLessThan(Duration.ofMillis(500));
        assertThat(terminationOf("d").hook()).isEmpty();
    }

    @Test
    void hookRunsAgainstThePodsOwnAddressWithEveryOtherArgumentAsRendered() {
        List<String> hook = List.of("python3", "-c", "import sys; sys.stderr.write(' | '.join(sys.argv[1:]))",
                "--host", "127.0.0.1", "--note", "127.0.0.1", "$(x)");
        client.resource(enginePod("e", 15L, hook)).create();
        awaitRunning("e");
        String address = fetch("e").getStatus().getPodIP();

        client.pods().inNamespace(NS).withName("e").delete();

        await().atMost(Duration.ofSeconds(5)).until(() -> fetch("e") == null);
        assertThat(terminationOf("e").hookOutput()).isEqualTo("--host | " + address + " | --note | 127.0.0.1 | $(x)");
    }

    @Test
    void restartGivesANewContainerIdAndCountsIt() throws Exception {
        client.resource(enginePod("f", null, null)).create();
        awaitRunning("f");
        String before = fetch("f").getStatus().getContainerStatuses().get(0).getContainerID();

        kubelet.restartContainer(NS, "f");

        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            var status = fetch("f").getStatus().getContainerStatuses().get(0);
            assertThat(status.getRestartCount()).isEqualTo(1);
            assertThat(status.getContainerID()).isNotEqualTo(before).startsWith("sim://");
        });
    }

    @Test
    void followersAndTakeOverCommandsRunNoEngine() {
        assertThat(SimKubelet.engineOf(List.of("vllm", "serve", "m", "--headless"))).isEmpty();
        assertThat(SimKubelet.engineOf(List.of("python3", "-m", "sglang.launch_server", "--node-rank", "1"))).isEmpty();
        assertThat(SimKubelet.engineOf(List.of("python3", "-m", "sglang.launch_server", "--node-rank", "0"))).isPresent();
        assertThat(SimKubelet.engineOf(List.of("/bin/my-engine"))).isEmpty();
    }
}
