package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterAdmin;
import dev.ebb.operator.sim.CannedListener;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimRouterPods;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The probe against router Pods that answer whatever a test gives them: every replica is asked, one that still
 * selects the target speaks for the router, and one that cannot be asked leaves it unknown. Some answer what no
 * released router should, a stalled answer and an endless one: the reconcile thread that asks is shared by every
 * namespace, so it must come back within the bound whatever the router does.
 */
class HttpRouterProbeTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    /** Far above the 2 s bound, so only a slip of the bound itself, not a loaded machine, fails the timing checks. */
    private static final Duration BOUND_WITH_MARGIN = Duration.ofSeconds(6);
    /** The spec's cap on a router's answer. */
    private static final int ONE_MIB = 1024 * 1024;

    private static final String ENGINES_PATH =
            RouterAdmin.of(RouterKind.VLLM_ROUTER).path();
    private static final Pod TARGET = new PodBuilder()
            .withNewMetadata()
            .withName("qwen-server-r1-m0")
            .endMetadata()
            .withNewStatus()
            .withPodIP("10.0.0.8")
            .endStatus()
            .build();
    private static final ModelDeployment ROUTED = Specs.deployment("qwen", "vLLM")
            .namespace("team-a")
            .router(RouterKind.VLLM_ROUTER.wireName())
            .role(Specs.role("server"))
            .build();

    private final List<CannedListener> listeners = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (CannedListener listener : listeners) {
            listener.close();
        }
    }

    private static URI at(CannedListener listener) {
        return URI.create("http://" + listener.host() + ":" + listener.port() + ENGINES_PATH);
    }

    private record Timed(RouterView view, Duration took) {}

    /** Asks one ready router Pod per address given, each answering there. */
    private static Timed ask(URI... replicas) {
        Map<String, URI> addresses = new HashMap<>();
        List<Pod> routerPods = new ArrayList<>();
        for (int i = 0; i < replicas.length; i++) {
            Pod routerPod = SimRouterPods.ready("team-a", "qwen-router-" + i, replicas[i].getHost());
            addresses.put(routerPod.getMetadata().getName(), replicas[i]);
            routerPods.add(routerPod);
        }
        return ask(
                new HttpRouterProbe((routerPod, kind) -> Optional.ofNullable(
                        addresses.get(routerPod.getMetadata().getName()))),
                routerPods);
    }

    private static Timed ask(HttpRouterProbe probe, List<Pod> routerPods) {
        long start = System.nanoTime();
        RouterView view = probe.view(ROUTED, routerPods, List.of(TARGET));
        return new Timed(view, Duration.ofNanos(System.nanoTime() - start));
    }

    private CannedListener answering(String body) throws IOException {
        return answering(200, body);
    }

    private CannedListener answering(int status, String body) throws IOException {
        CannedListener listener = new CannedListener(
                ADDRESSES.next(),
                0,
                "HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\n" + "Content-Length: " + body.length()
                        + "\r\nConnection: close\r\n\r\n" + body);
        listeners.add(listener);
        return listener;
    }

    /** vLLM's router listing no engine, padded with JSON whitespace to the given length: "withdrawn", if read whole. */
    private static String noEngines(int length) {
        return "[" + " ".repeat(length - 2) + "]";
    }

    @Test
    void aRouterThatDripsItsAnswerCannotTellAndTheProbeReturnsWithinTheBound() throws IOException {
        String body = noEngines(300);
        // a byte every 100 ms: the whole answer would take 30 s
        CannedListener dripping = CannedListener.dripping(
                ADDRESSES.next(),
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n",
                body,
                Duration.ofMillis(100));
        listeners.add(dripping);

        Timed asked = ask(at(dripping));

        assertThat(asked.view())
                .isEqualTo(RouterView.unavailable("router Pod qwen-router-0 did not answer within 2 s"));
        assertThat(asked.took()).isLessThan(BOUND_WITH_MARGIN);
    }

    @Test
    void anAnswerOverOneMebibyteCannotTellAndIsNotReadToItsEnd() throws IOException {
        String body = noEngines(ONE_MIB + 1);
        CannedListener oversized = answering(body);

        Timed asked = ask(at(oversized));

        assertThat(asked.view())
                .isEqualTo(RouterView.unavailable("router Pod qwen-router-0 could not be asked (IOException)"));
        assertThat(asked.took()).isLessThan(BOUND_WITH_MARGIN);
    }

    @Test
    void anAnswerOfExactlyOneMebibyteIsRead() throws IOException {
        String body = noEngines(ONE_MIB);
        CannedListener full = answering(body);

        assertThat(ask(at(full)).view().selects()).contains(false);
    }

    @Test
    void oneReplicaStillSelectingTheTargetSpeaksForTheRouter() throws IOException {
        CannedListener dropped = answering("[]");
        CannedListener stale = answering("[{\"engine_id\":\""
                + RouterAnswers.vllmEngineId(TARGET.getMetadata().getName()) + "\"}]");

        assertThat(ask(at(dropped), at(stale)).view()).isEqualTo(new RouterView(Optional.of(true), Map.of()));
        assertThat(ask(at(dropped), at(answering("[]"))).view())
                .isEqualTo(new RouterView(Optional.of(false), Map.of()));
    }

    @Test
    void everyRouterPodIsAskedDirectly() throws IOException {
        List<CannedListener> replicas = List.of(answering("[]"), answering("[]"), answering("[]"));

        ask(replicas.stream().map(HttpRouterProbeTest::at).toArray(URI[]::new));

        assertThat(replicas)
                .allSatisfy(replica -> assertThat(replica.requests())
                        .singleElement()
                        .satisfies(request -> assertThat(request).startsWith("GET " + ENGINES_PATH + " ")));
    }

    @Test
    void oneReplicaThatCannotBeAskedLeavesTheRouterUnknownThoughTheOthersDroppedTheTarget() throws IOException {
        URI dropped = at(answering("[]"));
        URI down = at(answering(503, "router unavailable"));
        URI malformed = at(answering("<html>"));
        URI dripping = at(CannedListener.dripping(
                ADDRESSES.next(),
                "HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n",
                noEngines(300),
                Duration.ofMillis(100)));
        URI refused = URI.create("http://" + ADDRESSES.next() + ":9" + ENGINES_PATH);

        Map<URI, String> why = new LinkedHashMap<>();
        why.put(down, "answered HTTP 503");
        why.put(malformed, "listed its engines in a shape that cannot be read");
        why.put(dripping, "did not answer within 2 s");
        why.put(refused, "could not be asked (ConnectException)");
        for (URI unanswered : why.keySet()) {
            Timed asked = ask(dropped, unanswered);
            // the hold names the router Pod to blame, and what it did
            assertThat(asked.view())
                    .as("beside %s", unanswered)
                    .isEqualTo(RouterView.unavailable("router Pod qwen-router-1 " + why.get(unanswered)));
            assertThat(asked.took()).isLessThan(BOUND_WITH_MARGIN);
        }
    }

    @Test
    void aRouterPodWithoutAnAddressOrReadinessOrNoRouterPodAtAllCannotTell() throws IOException {
        URI dropped = at(answering("[]"));
        HttpRouterProbe probe = new HttpRouterProbe((routerPod, kind) -> Optional.of(dropped));
        Pod ready = SimRouterPods.ready("team-a", "qwen-router-0", dropped.getHost());
        Pod notReady = new PodBuilder(SimRouterPods.ready("team-a", "qwen-router-1", "10.0.0.9"))
                .editStatus()
                .editFirstCondition()
                .withStatus("False")
                .endCondition()
                .endStatus()
                .build();

        assertThat(ask(probe, List.of(ready)).view().selects()).contains(false);
        assertThat(ask(probe, List.of(ready, notReady)).view())
                .isEqualTo(RouterView.unavailable("router Pod qwen-router-1 is not ready"));
        assertThat(ask(probe, List.of()).view()).isEqualTo(RouterView.unavailable("the router has no Pod"));
        assertThat(ask(new HttpRouterProbe((routerPod, kind) -> Optional.empty()), List.of(ready))
                        .view())
                .isEqualTo(RouterView.unavailable("router Pod qwen-router-0 has no address to ask"));
    }
    /**
     * A router rollout whose surge Pod cannot be scheduled or pull its image: that Pod has never run and routed
     * nothing, so the router's answer is the ready Pods' alone. One left Terminating on a lost node did route: it holds
     * the answer, named.
     */
    @Test
    void aSurgePodThatNeverRanIsNotAskedButATerminatingPodThatRoutedHoldsAndIsNamed() throws IOException {
        URI dropped = at(answering("[]"));
        HttpRouterProbe probe = new HttpRouterProbe((routerPod, kind) -> Optional.of(dropped));
        Pod ready = SimRouterPods.ready("team-a", "qwen-router-0", dropped.getHost());
        Pod unscheduled = new PodBuilder()
                .withNewMetadata()
                .withName("qwen-router-7f9c-x2")
                .endMetadata()
                .withNewStatus()
                .withPhase("Pending")
                .endStatus()
                .build();
        Pod pullingNoImage = new PodBuilder()
                .withNewMetadata()
                .withName("qwen-router-7f9c-x3")
                .endMetadata()
                .withNewStatus()
                .withPhase("Pending")
                .withPodIP("10.0.0.8")
                .addNewCondition()
                .withType("Ready")
                .withStatus("False")
                .endCondition()
                .endStatus()
                .build();
        Pod lostNode = new PodBuilder(SimRouterPods.ready("team-a", "qwen-router-1", "10.0.0.9"))
                .editMetadata()
                .withDeletionTimestamp("2026-12-02T10:00:00Z")
                .endMetadata()
                .editStatus()
                .editFirstCondition()
                .withStatus("Unknown")
                .endCondition()
                .endStatus()
                .build();

        assertThat(ask(probe, List.of(ready, unscheduled, pullingNoImage))
                        .view()
                        .selects())
                .contains(false);
        assertThat(ask(probe, List.of(ready, lostNode)).view())
                .isEqualTo(RouterView.unavailable("router Pod qwen-router-1 is not ready"));
    }
}
