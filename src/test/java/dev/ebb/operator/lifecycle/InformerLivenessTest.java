package dev.ebb.operator.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.quarkus.runtime.ShutdownEvent;
import java.lang.reflect.Proxy;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;

class InformerLivenessTest {

    @SuppressWarnings("unchecked")
    private static SharedIndexInformer<Pod> podInformer() {
        return (SharedIndexInformer<Pod>) Proxy.newProxyInstance(
                InformerLivenessTest.class.getClassLoader(),
                new Class<?>[] {SharedIndexInformer.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getApiTypeClass" -> Pod.class;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void liveWhileEveryInformerRuns() {
        HealthCheckResponse response = new InformerLiveness().call();

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
        assertThat(response.getName()).isEqualTo(InformerLiveness.NAME);
    }

    @Test
    void anInformerStoppedForGoodTurnsLivenessDownAndSaysWhichAndWhy() {
        InformerLiveness liveness = new InformerLiveness();

        liveness.onStop(
                podInformer(), new KubernetesClientException("pods is forbidden: User cannot watch resource \"pods\""));
        HealthCheckResponse response = liveness.call();

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        assertThat(response.getData())
                .hasValueSatisfying(data -> assertThat(data)
                        .containsEntry(
                                "Pod informer",
                                "KubernetesClientException: pods is forbidden: User cannot watch resource \"pods\""));
    }

    @Test
    void aStopWithoutInformerOrCauseIsStillReported() {
        InformerLiveness liveness = new InformerLiveness();

        liveness.onStop(null, null);

        assertThat(liveness.call().getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        assertThat(liveness.call().getData())
                .hasValueSatisfying(data -> assertThat(data).containsEntry("informer", "stopped"));
    }

    @Test
    void informersTheOperatorStopsOnItsWayOutAreNoFailure() {
        InformerLiveness liveness = new InformerLiveness();
        liveness.onShutdownStarted(new ShutdownEvent());

        liveness.onStop(podInformer(), null);

        assertThat(liveness.call().getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
        liveness.onStop(podInformer(), new KubernetesClientException("watch refused"));
        assertThat(liveness.call().getStatus())
                .as("a watch that failed still counts while stopping")
                .isEqualTo(HealthCheckResponse.Status.DOWN);
    }
}
