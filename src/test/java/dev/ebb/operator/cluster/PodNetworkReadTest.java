package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.InFlightGauges;
import dev.ebb.operator.read.ConnectionRead;
import dev.ebb.operator.read.ExecLimits;
import dev.ebb.operator.read.ExecResult;
import dev.ebb.operator.read.ReadCommand;
import dev.ebb.operator.read.ReadOutcome;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.sim.FakeEngine;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.LoopbackAddresses;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A Pod of the cluster tier has a pod-network address (a real API server refuses loopback ones in an EndpointSlice),
 * while the member read, as rendered, asks for the engine on 127.0.0.1 and refuses any other host. In a Pod both hold:
 * loopback is the Pod's own. Here every Pod shares the machine's, so an engine on the pod network must also be
 * reachable on a loopback address that is its Pod's alone, and the read must be pointed there.
 */
class PodNetworkReadTest {
    private static final ExecLimits LIMITS = new ExecLimits(64 * 1024, Duration.ofSeconds(5));
    private final LocalExec exec = new LocalExec();
    private FakeEngine engine;

    @AfterEach
    void stop() {
        exec.close();
        if (engine != null) {
            engine.close();
        }
    }

    private Pod podAt(String address) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withAnnotations(Map.of(Annotations.SCRAPE_PORT, "8000"))
                .endMetadata()
                .withNewStatus()
                .withPodIP(address)
                .endStatus()
                .build();
    }

    @Test
    void theRenderedMemberReadOfAnEngineOnThePodNetworkReadsItsGauges() throws Exception {
        String address = LoopbackAddresses.podNetwork().next();
        engine = FakeEngine.start(Engine.VLLM, address, 8000, "m");
        Pod pod = podAt(address);

        ExecResult result = exec.exec(
                        pod,
                        "engine",
                        ReadCommand.forMember(pod, 64 * 1024).command().orElseThrow(),
                        LIMITS)
                .await()
                .atMost(Duration.ofSeconds(10));

        assertThat(ReadOutcome.interpret(result, InFlightGauges.of(Engine.VLLM)))
                .isEqualTo(new Reading.Idle());
    }

    @Test
    void theConnectionReadCountsTheClientsOfThePodAddress() throws Exception {
        String address = LoopbackAddresses.podNetwork().next();
        engine = FakeEngine.start(Engine.VLLM, address, 8000, "m");
        Pod pod = podAt(address);
        try (Socket client = new Socket(address, 8000)) {
            ExecResult result = exec.exec(pod, "engine", ConnectionRead.command(8000, Optional.empty()), LIMITS)
                    .await()
                    .atMost(Duration.ofSeconds(10));

            assertThat(ConnectionRead.interpret(result))
                    .isInstanceOfSatisfying(
                            ConnectionRead.Peers.Connected.class,
                            connected -> assertThat(connected.count()).isEqualTo(1));
        }
    }
}
