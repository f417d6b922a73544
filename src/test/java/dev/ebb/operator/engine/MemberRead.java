package dev.ebb.operator.engine;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.sim.LocalExec;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;

/**
 * The member read as the operator runs it, against a real engine on this machine: read-metrics.py in the member's
 * container (here a local process), its output parsed by the reader.
 */
final class MemberRead implements AutoCloseable {
    private final LocalExec exec = new LocalExec();
    private final MemberReader reader = new MemberReader(exec, new SimpleMeterRegistry());
    private final Engine engine;
    private final Pod member;

    MemberRead(RealEngine real) {
        this.engine = real.engine;
        this.member = new PodBuilder()
                .withNewMetadata()
                .withName("tiny-server-r0-m0")
                .withNamespace("engine")
                .withAnnotations(Map.of(Annotations.SCRAPE_PORT, Integer.toString(real.port)))
                .endMetadata()
                .withNewStatus()
                .withPodIP(real.host)
                .endStatus()
                .build();
    }

    Reading read() {
        return reader.read(member, engine).await().atMost(Duration.ofSeconds(10));
    }

    @Override
    public void close() {
        exec.close();
    }
}
