package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.v1alpha1.DrainStatus;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.drain.DrainWarning;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.render.RoutingProxy;
import dev.ebb.operator.sim.AdmittingDispatcher;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.VersionInfo;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Pods whose form depends on the cluster's version: not rendered on a guess while the version cannot be read, and on a
 * cluster without native sidecars rendered with the routing proxy as a classic container, which the status warns of.
 */
class PlatformIT {
    private static final String NS = "platform";
    private final AdmittingDispatcher dispatcher = SimApiServer.dispatcher();
    private final KubernetesMockServer server = SimApiServer.startServer(dispatcher);
    // without retries a failed version read fails at once instead of after the client's back-off
    private final KubernetesClient client = SimApiServer.clientWithoutRetries(server);
    private final LocalExec exec = new LocalExec();

    @AfterEach
    void stop() {
        exec.close();
        client.close();
        server.destroy();
    }

    @Test
    void directDecodersWaitForTheVersionAndThenRenderForIt() {
        dispatcher.version(Optional.empty());
        try (SimOperator operator = new SimOperator(client, exec, new SimRouterAddress())) {
            client.resource(deployment("pd", "vLLM")
                            .scaling("decode")
                            .namespace(NS)
                            .router("llm-d-router")
                            .role(role("decode").kind("Decode"))
                            .build())
                    .create();

            await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher.versionAnswers() > 0);
            await().during(Duration.ofSeconds(3))
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> client.pods().inNamespace(NS).list().getItems().isEmpty());
            assertThat(client.v1().events().inNamespace(NS).list().getItems())
                    .anySatisfy(e ->
                            assertThat(e.getReason()).isEqualTo(ModelDeploymentReconciler.REASON_PLATFORM_UNKNOWN));

            dispatcher.version(Optional.of(
                    new VersionInfo.Builder().withMajor("1").withMinor("30").build()));
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> client.pods()
                                    .inNamespace(NS)
                                    .withName(Names.pod("pd", "decode", 0, 0))
                                    .get()
                            != null);
            Pod decoder = client.pods()
                    .inNamespace(NS)
                    .withName(Names.pod("pd", "decode", 0, 0))
                    .get();
            assertThat(decoder.getSpec().getInitContainers())
                    .extracting(Container::getName)
                    .containsExactly(RoutingProxy.CONTAINER);
            assertThat(decoder.getSpec().getContainers())
                    .extracting(Container::getName)
                    .doesNotContain(RoutingProxy.CONTAINER);
        }
    }

    /** Below 1.29 the proxy stops at a delete while the engine still drains (RoutingProxyContainerTest shows the cut). */
    @Test
    void belowKubernetes129TheProxyIsAClassicContainerAndTheStatusAndAnEventWarnThatItStopsAtTheDelete() {
        dispatcher.version(Optional.of(
                new VersionInfo.Builder().withMajor("1").withMinor("28").build()));
        try (SimOperator operator = new SimOperator(client, exec, new SimRouterAddress())) {
            client.resource(deployment("pd", "vLLM")
                            .scaling("decode")
                            .namespace(NS)
                            .router("llm-d-router")
                            .role(role("decode").kind("Decode"))
                            .build())
                    .create();

            await().atMost(Duration.ofSeconds(20))
                    .until(() -> client.pods()
                                    .inNamespace(NS)
                                    .withName(Names.pod("pd", "decode", 0, 0))
                                    .get()
                            != null);
            Pod decoder = client.pods()
                    .inNamespace(NS)
                    .withName(Names.pod("pd", "decode", 0, 0))
                    .get();
            assertThat(decoder.getSpec().getContainers())
                    .extracting(Container::getName)
                    .containsExactly(EnginePod.CONTAINER, RoutingProxy.CONTAINER);
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                ModelDeployment md = client.resources(ModelDeployment.class)
                        .inNamespace(NS)
                        .withName("pd")
                        .get();
                assertThat(md.getStatus()).isNotNull();
                assertThat(md.getStatus().roles())
                        .singleElement()
                        .satisfies(role -> assertThat(role.drain().warnings())
                                .extracting(DrainStatus.Warning::reason)
                                .containsExactly(DrainWarning.PROXY_STOPS_AT_DELETE));
                assertThat(client.v1().events().inNamespace(NS).list().getItems())
                        .anySatisfy(e -> assertThat(e.getReason()).isEqualTo(DrainWarning.PROXY_STOPS_AT_DELETE));
            });
        }
    }
}
