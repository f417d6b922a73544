package dev.ebb.operator.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.server.mock.OutputStreamMessage;
import io.fabric8.kubernetes.client.server.mock.StatusStreamMessage;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.fabric8.mockwebserver.internal.WebSocketMessage;
import io.smallrye.mutiny.subscription.Cancellable;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fabric8 exec wrapper against the mock API server in mixed mode: Pods live in its store, the exec websocket
 * and API errors are expectations, which the server answers before it looks at the store.
 */
@EnableKubernetesMockClient(crud = true)
class Fabric8PodExecTest {
    private static final List<String> ARGV = List.of("python3", "-c", "print(1)");
    private static final String PATH =
            "/api/v1/namespaces/ns/pods/p/exec?command=python3&command=-c&command=print%281%29"
                    + "&container=main&stdout=true&stderr=true";
    private static final String POD_PATH = "/api/v1/namespaces/ns/pods/p";
    private static final ExecLimits LIMITS = new ExecLimits(64, Duration.ofSeconds(2));

    KubernetesMockServer server;
    KubernetesClient client;
    private Fabric8PodExec exec;
    private final Pod pod = new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .withNamespace("ns")
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("main")
            .endContainer()
            .endSpec()
            .withNewStatus()
            .withPhase("Running")
            .endStatus()
            .build();

    @BeforeEach
    void setUp() {
        exec = new Fabric8PodExec(client);
        // the client looks the Pod up before it opens the exec websocket
        client.resource(pod).create();
    }

    private ExecResult run(ExecLimits limits) {
        return exec.exec(pod, "main", ARGV, limits).await().atMost(Duration.ofSeconds(10));
    }

    @Test
    void completesWithTheOutputOnTheExitCode() throws Exception {
        // the API server sends the status after the output and the session then stays open: the read must end on the
        // exit code, not on a close (a close from the server can overtake the status frame in the client)
        ScriptedSession session =
                new ScriptedSession(new OutputStreamMessage("metrics body\n"), new StatusStreamMessage(0));

        ExecResult result = runAgainst(session, LIMITS);

        assertThat(result).isInstanceOfSatisfying(ExecResult.Exited.class, exited -> {
            assertThat(exited.code()).isZero();
            assertThat(new String(exited.stdout(), StandardCharsets.UTF_8)).isEqualTo("metrics body\n");
        });
    }

    @Test
    void nonZeroExitIsReported() {
        server.expect()
                .get()
                .withPath(PATH)
                .andUpgradeToWebSocket()
                .open(new StatusStreamMessage(5))
                .done()
                .once();

        assertThat(run(LIMITS))
                .isInstanceOfSatisfying(
                        ExecResult.Exited.class,
                        exited -> assertThat(exited.code()).isEqualTo(5));
    }

    @Test
    void outputOverTheCapEndsTheRead() {
        server.expect()
                .get()
                .withPath(PATH)
                .andUpgradeToWebSocket()
                .open(new OutputStreamMessage("x".repeat(100)), new StatusStreamMessage(0))
                .done()
                .once();

        assertThat(run(LIMITS)).isEqualTo(new ExecResult.Overflowed(64));
    }

    @Test
    void noAnswerEndsAtTheDeadline() throws Exception {
        ScriptedSession silent = new ScriptedSession();
        long start = System.nanoTime();

        ExecResult result = runAgainst(silent, new ExecLimits(64, Duration.ofMillis(800)));

        assertThat(result).isEqualTo(new ExecResult.TimedOut(Duration.ofMillis(800)));
        assertThat(since(start)).isLessThan(Duration.ofMillis(2500));
    }

    @Test
    void podWithoutTheContainerIsAFailedExecNotAnException() {
        Pod sidecarOnly = new PodBuilder()
                .withNewMetadata()
                .withName("q")
                .withNamespace("ns")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("proxy")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .endStatus()
                .build();
        client.resource(sidecarOnly).create();

        ExecResult result = exec.exec(sidecarOnly, "main", ARGV, LIMITS).await().atMost(Duration.ofSeconds(10));

        assertThat(result).isEqualTo(new ExecResult.Failed("container main not found in pod q"));
    }

    /** The refusal kube-apiserver v1.37.2 answers an exec its RBAC does not allow with, as the cluster tier saw it. */
    private static final String FORBIDDEN =
            "pods \\\"q\\\" is forbidden: User \\\"system:serviceaccount:ebb-system:ebb-operator\\\" cannot create"
                    + " resource \\\"pods/exec\\\" in API group \\\"\\\" in the namespace \\\"ns\\\"";

    @Test
    void refusedUpgradeIsAFailedExecThatSaysWhatTheApiServerSaid() {
        server.expect()
                .get()
                .withPath(PATH)
                .andReturn(
                        403,
                        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"" + FORBIDDEN
                                + "\",\"reason\":\"Forbidden\",\"code\":403}")
                .once();

        assertThat(run(LIMITS))
                .isEqualTo(new ExecResult.Failed(
                        "HTTP 403: pods \"q\" is forbidden: User \"system:serviceaccount:ebb-system:ebb-operator\""
                                + " cannot create resource \"pods/exec\" in API group \"\" in the namespace \"ns\""));
    }

    @Test
    void refusalWhoseBodyIsNoStatusSaysOnlyItsCode() {
        server.expect()
                .get()
                .withPath(PATH)
                .andReturn(403, "<html>denied</html>")
                .once();

        assertThat(run(LIMITS)).isEqualTo(new ExecResult.Failed("HTTP 403"));
    }

    @Test
    void refusalWithAHugeOrMultiLineMessageIsCutToOneBoundedLine() {
        String huge = "line one\\nline two " + "x".repeat(10_000);
        server.expect()
                .get()
                .withPath(PATH)
                .andReturn(
                        403, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"" + huge + "\",\"code\":403}")
                .once();

        ExecResult result = run(LIMITS);

        assertThat(result).isInstanceOfSatisfying(ExecResult.Failed.class, failed -> {
            assertThat(failed.why())
                    .startsWith("HTTP 403: line one line two xxx")
                    .doesNotContain("\n");
            assertThat(failed.why().length())
                    .isLessThanOrEqualTo(Fabric8PodExec.MAX_REFUSAL_CHARS + "HTTP 403: ".length());
        });
    }

    private static String status(int code, String reason) {
        return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"" + reason
                + "\",\"message\":\"" + reason + "\",\"code\":" + code + "}";
    }

    private static Duration since(long start) {
        return Duration.ofNanos(System.nanoTime() - start);
    }

    @Test
    void outputOverTheCapEndsTheReadLongBeforeTheDeadline() throws Exception {
        // more than the cap, then silence: nothing but the cap can end this read before the deadline
        ScriptedSession chatty = new ScriptedSession(new OutputStreamMessage("x".repeat(100)));
        long start = System.nanoTime();

        ExecResult result = runAgainst(chatty, new ExecLimits(64, Duration.ofSeconds(5)));

        assertThat(result).isEqualTo(new ExecResult.Overflowed(64));
        assertThat(since(start)).isLessThan(Duration.ofMillis(2500));
    }

    @Test
    void deadlineCoversThePodLookup() {
        CountDownLatch testOver = new CountDownLatch(1);
        String podJson = client.getKubernetesSerialization().asJson(pod);
        // the Pod is served only once the test is over, long after the read's deadline
        KubernetesMockServer slow = serverAnswering(
                () -> {
                    awaitQuietly(testOver);
                    return new MockResponse().setResponseCode(200).setBody(podJson);
                },
                () -> new MockResponse().withWebSocketUpgrade(new WebSocketListener() {}));
        try (KubernetesClient slowClient = slow.createClient()) {
            long start = System.nanoTime();

            ExecResult result = new Fabric8PodExec(slowClient)
                    .exec(pod, "main", ARGV, new ExecLimits(64, Duration.ofMillis(800)))
                    .await()
                    .atMost(Duration.ofSeconds(10));

            assertThat(result).isEqualTo(new ExecResult.TimedOut(Duration.ofMillis(800)));
            assertThat(since(start)).isBetween(Duration.ofMillis(700), Duration.ofMillis(2500));
        } finally {
            testOver.countDown();
            slow.destroy();
        }
    }

    @Test
    void podDeletedBeforeTheLookupIsAFailedExec() {
        client.resource(pod).delete();

        assertThat(run(LIMITS)).isInstanceOf(ExecResult.Failed.class);
    }

    @Test
    void podDeletedBetweenLookupAndUpgradeIsAFailedExec() {
        server.expect()
                .get()
                .withPath(PATH)
                .andReturn(404, status(404, "NotFound"))
                .once();

        assertThat(run(LIMITS)).isInstanceOf(ExecResult.Failed.class);
    }

    @Test
    void serverErrorOnThePodLookupIsRetriedOnlyUntilTheDeadline() {
        // the client retries a 5xx with backoff; the read's own deadline is what bounds that
        server.expect()
                .get()
                .withPath(POD_PATH)
                .andReturn(500, status(500, "InternalError"))
                .always();
        long start = System.nanoTime();

        ExecResult result = run(new ExecLimits(64, Duration.ofMillis(800)));

        assertThat(result).isEqualTo(new ExecResult.TimedOut(Duration.ofMillis(800)));
        assertThat(since(start)).isLessThan(Duration.ofMillis(1800));
    }

    @Test
    void serverErrorOnTheUpgradeIsAFailedExec() {
        server.expect()
                .get()
                .withPath(PATH)
                .andReturn(500, status(500, "InternalError"))
                .once();

        assertThat(run(LIMITS)).isInstanceOf(ExecResult.Failed.class);
    }

    @Test
    void malformedStatusFrameIsAFailedExecAtOnce() throws Exception {
        byte[] frame = "\u0003{not a status".getBytes(StandardCharsets.UTF_8);
        ScriptedSession garbled =
                new ScriptedSession(new OutputStreamMessage("partial\n"), new WebSocketMessage(0L, frame, true, true));

        assertThat(runAgainst(garbled, LIMITS))
                .isEqualTo(new ExecResult.Failed("the exec ended without a readable exit status"));
    }

    /**
     * An exec session that sends its frames on open and then stays silent until the client closes it, as an API server
     * does while the command runs on. It lives on a server of its own, which is shut down only after the reader has
     * closed the socket: the reader must close whatever socket it leaves, and a server shut down while a close is still
     * on its way fails in its own event loop.
     */
    private static final class ScriptedSession extends WebSocketListener {
        private final List<WebSocketMessage> frames;
        private final CountDownLatch opened = new CountDownLatch(1);
        private final CountDownLatch closedByClient = new CountDownLatch(1);

        ScriptedSession(WebSocketMessage... frames) {
            this.frames = List.of(frames);
        }

        @Override
        public void onOpen(WebSocket webSocket, Response response) {
            frames.forEach(frame -> webSocket.send(frame.getBytes()));
            opened.countDown();
        }

        @Override
        public void onClosing(WebSocket webSocket, int code, String reason) {
            closedByClient.countDown();
            webSocket.close(code, reason);
        }
    }

    private ExecResult runAgainst(ScriptedSession session, ExecLimits limits) throws InterruptedException {
        KubernetesMockServer own = serverAnsweringExecWith(() -> new MockResponse().withWebSocketUpgrade(session));
        try (KubernetesClient ownClient = own.createClient()) {
            ExecResult result = new Fabric8PodExec(ownClient)
                    .exec(pod, "main", ARGV, limits)
                    .await()
                    .atMost(Duration.ofSeconds(10));
            assertThat(session.closedByClient.await(5, TimeUnit.SECONDS))
                    .as("the reader closed the socket")
                    .isTrue();
            return result;
        } finally {
            own.destroy();
        }
    }

    /**
     * A server of its own, which serves the Pod and answers the exec request as the test says: the expectation DSL
     * keeps its websocket sessions to itself, and answers an upgrade at once whatever delay it is given.
     */
    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private KubernetesMockServer serverAnsweringExecWith(Supplier<MockResponse> execAnswer) {
        String podJson = client.getKubernetesSerialization().asJson(pod);
        return serverAnswering(() -> new MockResponse().setResponseCode(200).setBody(podJson), execAnswer);
    }

    private KubernetesMockServer serverAnswering(Supplier<MockResponse> podAnswer, Supplier<MockResponse> execAnswer) {
        KubernetesMockServer own = new KubernetesMockServer(
                new Context(),
                new MockWebServer(),
                new HashMap<>(),
                new Dispatcher() {
                    @Override
                    public MockResponse dispatch(RecordedRequest request) {
                        if (request.getPath().equals(PATH)) {
                            return execAnswer.get();
                        }
                        if (request.getPath().equals(POD_PATH)) {
                            return podAnswer.get();
                        }
                        return new MockResponse().setResponseCode(404).setBody(status(404, "NotFound"));
                    }
                },
                false);
        own.init();
        return own;
    }

    @Test
    void deadlineCoversTheUpgrade() {
        CountDownLatch testOver = new CountDownLatch(1);
        KubernetesMockServer slow = serverAnsweringExecWith(() -> {
            // the upgrade is answered only once the test is over, long after the read's deadline
            awaitQuietly(testOver);
            return new MockResponse().withWebSocketUpgrade(new WebSocketListener() {});
        });
        try (KubernetesClient slowClient = slow.createClient()) {
            long start = System.nanoTime();

            ExecResult result = new Fabric8PodExec(slowClient)
                    .exec(pod, "main", ARGV, new ExecLimits(64, Duration.ofMillis(800)))
                    .await()
                    .atMost(Duration.ofSeconds(10));

            assertThat(result).isEqualTo(new ExecResult.TimedOut(Duration.ofMillis(800)));
            assertThat(since(start)).isBetween(Duration.ofMillis(700), Duration.ofMillis(1800));
        } finally {
            testOver.countDown();
            slow.destroy();
        }
    }

    @Test
    void cancellingWhileTheSocketIsSilentClosesItAtTheServer() throws Exception {
        ScriptedSession session = new ScriptedSession();
        KubernetesMockServer silent = serverAnsweringExecWith(() -> new MockResponse().withWebSocketUpgrade(session));
        try (KubernetesClient silentClient = silent.createClient()) {
            CountDownLatch openAtTheClient = new CountDownLatch(1);
            Fabric8PodExec.Opener throughServer = Fabric8PodExec.throughApiServer(silentClient);
            Fabric8PodExec silentExec = new Fabric8PodExec((p, container, argv, stdout, listener) -> {
                ExecWatch watch = throughServer.open(p, container, argv, stdout, listener);
                openAtTheClient.countDown();
                return watch;
            });
            Cancellable read = silentExec
                    .exec(pod, "main", ARGV, new ExecLimits(64, Duration.ofSeconds(30)))
                    .subscribe()
                    .with(r -> {});
            assertThat(session.opened.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(openAtTheClient.await(5, TimeUnit.SECONDS)).isTrue();

            read.cancel();

            assertThat(session.closedByClient.await(5, TimeUnit.SECONDS)).isTrue();
        } finally {
            silent.destroy();
        }
    }
}
