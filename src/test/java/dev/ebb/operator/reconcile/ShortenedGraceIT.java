package dev.ebb.operator.reconcile;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.RecordedEvents;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A Pod of the operator's deleted by hand with less grace than its own is reported, once, with what it leaves. */
class ShortenedGraceIT {
    private static final String NS = "short-grace";
    private final KubernetesMockServer server = SimApiServer.startServer();
    private final KubernetesClient client = server.createClient();
    private final SimWorld world = new SimWorld(client);
    private final LocalExec exec = new LocalExec();

    @AfterEach
    void stop() {
        world.close();
        exec.close();
        client.close();
        server.destroy();
    }

    private List<Event> told() {
        return RecordedEvents.occurrences(client, NS).stream()
                .filter(e -> ShortenedGraces.REASON.equals(e.getReason()))
                .toList();
    }

    @Test
    void aPodDeletedWithAShorterGraceIsReportedOnItsDeploymentOnce() {
        String name = Names.pod("qwen", "server", 0, 0);
        try (SimOperator operator = new SimOperator(client, exec, new SimRouterAddress())) {
            client.resource(deployment("qwen", "vLLM")
                            .namespace(NS)
                            .role(role("server").grace(40))
                            .build())
                    .create();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                Pod pod = client.pods().inNamespace(NS).withName(name).get();
                return pod != null
                        && pod.getStatus() != null
                        && "Running".equals(pod.getStatus().getPhase());
            });
            String uid = client.pods()
                    .inNamespace(NS)
                    .withName(name)
                    .get()
                    .getMetadata()
                    .getUid();

            client.pods().inNamespace(NS).withName(name).withGracePeriod(15).delete();

            await().atMost(Duration.ofSeconds(20))
                    .untilAsserted(() -> assertThat(told()).singleElement().satisfies(e -> {
                        assertThat(e.getType()).isEqualTo("Warning");
                        assertThat(e.getInvolvedObject().getName()).isEqualTo("qwen");
                        assertThat(e.getMessage())
                                .contains(
                                        "Pod " + name + " was deleted with a grace of 15 s, shorter than its own 40 s")
                                .contains("at most 15 s");
                    }));
            // its replacement, at the same name, is no news
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                Pod pod = client.pods().inNamespace(NS).withName(name).get();
                return pod != null && !pod.getMetadata().getUid().equals(uid) && pod.getStatus() != null;
            });
            assertThat(told()).hasSize(1);
        }
    }
}
