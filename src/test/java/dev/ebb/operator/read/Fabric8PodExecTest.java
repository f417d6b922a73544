package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.server.mock.OutputStreamMessage;
import io.fabric8.kubernetes.client.server.mock.StatusStreamMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fabric8 exec wrapper against the mock API server's websocket. */
@EnableKubernetesMockClient
class Fabric8PodExecTest {
    private static final List<String> ARGV = List.of("python3", "-c", "print(1)");
    private static final String PATH = "/api/v1/namespaces/ns/pods/p/exec?command=python3&command=-c&command=print%281%29"
            + "&container=main&stdout=true&stderr=true";
    private static final ExecLimits LIMITS = new ExecLimits(64, Duration.ofSeconds(2));

    KubernetesMockServer server;
    KubernetesClient client;
    private Fabric8PodExec exec;
    private final Pod pod = new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").endMetadata()
            .withNewSpec().addNewContainer().withName("main").endContainer().endSpec()
            .withNewStatus().withPhase("Running").endStatus().build();

    @BeforeEach
    void setUp() {
        exec = new Fabric8PodExec(client);
        // the client looks the Pod up before it opens the exec websocket
        server.expect().get().withPath("/api/v1/namespaces/ns/pods/p").andReturn(200, pod).always();
    }

    private ExecResult run(ExecLimits limits) {
        return exec.exec(pod, "main", ARGV, limits).await().atMost(Duration.ofSeconds(10));
    }

    @Test
    void completesWithTheOutputOnTheExitCode() {
        // the API server sends the status after the output; the mock then leaves the socket open (it waits for a
        // message the client never sends), since a close from the server can overtake the status frame in the client,
        // and the reader must end the read on the exit code, not on a close
        server.expect().withPath(PATH).andUpgradeToWebSocket().open(new OutputStreamMessage("metrics body\n"))
                .waitFor(200).andEmit(new StatusStreamMessage(0))
                .expect("a message the client never sends").andEmit(new StatusStreamMessage(1)).once()
                .done().once();

        ExecResult result = run(LIMITS);

        assertThat(result).isInstanceOfSatisfying(ExecResult.Exited.class, exited -> {
            assertThat(exited.code()).isZero();
            assertThat(new String(exited.stdout(), StandardCharsets.UTF_8)).isEqualTo("metrics body\n");
        });
    }

    @Test
    void nonZeroExitIsReported() {
        server.expect().withPath(PATH).andUpgradeToWebSocket().open(new StatusStreamMessage(5)).done().once();

        assertThat(run(LIMITS)).isInstanceOfSatisfying(ExecResult.Exited.class, exited -> assertThat(exited.code()).isEqualTo(5));
    }

    @Test
    void outputOverTheCapEndsTheRead() {
        server.expect().withPath(PATH).andUpgradeToWebSocket()
                .open(new OutputStreamMessage("x".repeat(100)), new StatusStreamMessage(0)).done().once();

        assertThat(run(LIMITS)).isEqualTo(new ExecResult.Overflowed(64));
    }

    @Test
    void noAnswerEndsAtTheDeadline() {
        // the session answers only a client message that never comes, so the socket stays open and silent
        server.expect().withPath(PATH).andUpgradeToWebSocket().open()
                .expect("a message the client never sends").andEmit(new StatusStreamMessage(0)).once()
                .done().once();
        long start = System.nanoTime();

        ExecResult result = run(new ExecLimits(64, Duration.ofMillis(800)));

        assertThat(result).isEqualTo(new ExecResult.TimedOut(Duration.ofMillis(800)));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1500));
    }

    @Test
    void podWithoutTheContainerIsAFailedExecNotAnException() {
        Pod sidecarOnly = new PodBuilder().withNewMetadata().withName("q").withNamespace("ns").endMetadata()
                .withNewSpec().addNewContainer().withName("proxy").endContainer().endSpec()
                .withNewStatus().withPhase("Running").endStatus().build();
        server.expect().get().withPath("/api/v1/namespaces/ns/pods/q").andReturn(200, sidecarOnly).always();

        ExecResult result = exec.exec(sidecarOnly, "main", ARGV, LIMITS).await().atMost(Duration.ofSeconds(10));

        assertThat(result).isEqualTo(new ExecResult.Failed("container main not found in pod q"));
    }

    @Test
    void refusedUpgradeIsAFailedExec() {
        server.expect().withPath(PATH).andReturn(403,
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"forbidden\",\"code\":403}")
                .once();

        assertThat(run(LIMITS)).isInstanceOf(ExecResult.Failed.class);
    }
}
