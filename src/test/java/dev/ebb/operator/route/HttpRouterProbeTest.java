package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterAdmin;
import dev.ebb.operator.sim.CannedListener;
import dev.ebb.operator.sim.LoopbackAddresses;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The probe against router Pods that answer what no released router should: a stalled answer and an endless one. The
 * reconcile thread that asks is shared by every namespace, so it must come back within the bound whatever the router
 * does.
 */
class HttpRouterProbeTest {
    private static final LoopbackAddresses ADDRESSES = new LoopbackAddresses();
    /** Far above the 2 s bound, so only a slip of the bound itself, not a loaded machine, fails the timing checks. */
    private static final Duration BOUND_WITH_MARGIN = Duration.ofSeconds(6);
    /** The spec's cap on a router's answer. */
    private static final int ONE_MIB = 1024 * 1024;
    private static final String ENGINES_PATH = RouterAdmin.of(RouterKind.VLLM_ROUTER).path();
    private static final Pod TARGET = new PodBuilder().withNewMetadata().withName("qwen-server-r1-m0").endMetadata()
            .withNewStatus().withPodIP("10.0.0.8").endStatus().build();
    private static final ModelDeployment ROUTED = Specs.deployment("qwen", "vLLM").namespace("team-a")
            .router(RouterKind.VLLM_ROUTER.wireName()).role(Specs.role("server")).build();

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

    private record Timed(RouterView view, Duration took) {
    }

    private static Timed ask(URI router) {
        HttpRouterProbe probe = new HttpRouterProbe((deployment, kind) -> router);
        long start = System.nanoTime();
        RouterView view = probe.view(ROUTED, List.of(TARGET), Instant.now());
        return new Timed(view, Duration.ofNanos(System.nanoTime() - start));
    }

    /** vLLM's router listing no engine, padded with JSON whitespace to the given length: "withdrawn", if read whole. */
    private static String noEngines(int length) {
        return "[" + " ".repeat(length - 2) + "]";
    }

    @Test
    void aRouterThatDripsItsAnswerCannotTellAndTheProbeReturnsWithinTheBound() throws IOException {
        String body = noEngines(300);
        // a byte every 100 ms: the whole answer would take 30 s
        CannedListener dripping = CannedListener.dripping(ADDRESSES.next(),
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n", body,
                Duration.ofMillis(100));
        listeners.add(dripping);

        Timed asked = ask(at(dripping));

        assertThat(asked.view()).isEqualTo(RouterView.unavailable());
        assertThat(asked.took()).isLessThan(BOUND_WITH_MARGIN);
    }

    @Test
    void anAnswerOverOneMebibyteCannotTellAndIsNotReadToItsEnd() throws IOException {
        String body = noEngines(ONE_MIB + 1);
        CannedListener oversized = new CannedListener(ADDRESSES.next(), 0,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
        listeners.add(oversized);

        Timed asked = ask(at(oversized));

        assertThat(asked.view()).isEqualTo(RouterView.unavailable());
        assertThat(asked.took()).isLessThan(BOUND_WITH_MARGIN);
    }

    @Test
    void anAnswerOfExactlyOneMebibyteIsRead() throws IOException {
        String body = noEngines(ONE_MIB);
        CannedListener full = new CannedListener(ADDRESSES.next(), 0,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
        listeners.add(full);

        assertThat(ask(at(full)).view().selects()).contains(false);
    }
}
