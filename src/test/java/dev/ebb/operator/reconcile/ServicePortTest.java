package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.render.RoutingProxy;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ServicePortTest {
    private static Container container(String name, String portName, int port) {
        return new ContainerBuilder()
                .withName(name)
                .addNewPort()
                .withName(portName)
                .withContainerPort(port)
                .endPort()
                .build();
    }

    private static Pod pod(List<Container> init, List<Container> containers) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("m")
                .endMetadata()
                .withNewSpec()
                .withInitContainers(init)
                .withContainers(containers)
                .endSpec()
                .build();
    }

    static Stream<Arguments> pods() {
        Container engine = container(EnginePod.CONTAINER, PodRenderer.PORT_NAME, 8000);
        return Stream.of(
                Arguments.of("the engine's port", pod(List.of(), List.of(engine)), Optional.of(8000)),
                Arguments.of(
                        "the proxy's port, as a native sidecar",
                        pod(
                                List.of(container(RoutingProxy.CONTAINER, RoutingProxy.PORT_NAME, 8000)),
                                List.of(container(
                                        EnginePod.CONTAINER, PodRenderer.PORT_NAME, RoutingProxy.ENGINE_PORT))),
                        Optional.of(8000)),
                Arguments.of(
                        "the proxy's port, as a container",
                        pod(
                                List.of(),
                                List.of(
                                        container(EnginePod.CONTAINER, PodRenderer.PORT_NAME, RoutingProxy.ENGINE_PORT),
                                        container(RoutingProxy.CONTAINER, RoutingProxy.PORT_NAME, 9000))),
                        Optional.of(9000)),
                Arguments.of(
                        "another container's port is not the Service's",
                        pod(List.of(), List.of(container("metrics", "http", 9090))),
                        Optional.empty()),
                Arguments.of(
                        "an engine port out of range",
                        pod(List.of(), List.of(container(EnginePod.CONTAINER, PodRenderer.PORT_NAME, 70000))),
                        Optional.empty()),
                Arguments.of(
                        "no spec",
                        new PodBuilder()
                                .withNewMetadata()
                                .withName("m")
                                .endMetadata()
                                .build(),
                        Optional.empty()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pods")
    void thePortClientsOfTheRolesServiceConnectTo(String what, Pod pod, Optional<Integer> port) {
        assertThat(ServicePort.of(pod)).isEqualTo(port);
    }
}
