package dev.ebb.operator.observe;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EventRecorderTest {
    private static final String NS = "events";
    private final KubernetesMockServer server = SimApiServer.startServer();
    private final KubernetesClient client = server.createClient();
    private final EventRecorder events = new EventRecorder(client);
    private final ModelDeployment md = client.resource(deployment("qwen", "vLLM")
                    .namespace(NS)
                    .role(role("server"))
                    .build())
            .create();

    @AfterEach
    void stop() {
        client.close();
        server.destroy();
    }

    private List<Event> recorded() {
        return client.v1().events().inNamespace(NS).list().getItems();
    }

    @Test
    void theSameEventSixtyTimesIsOneEventCountedSixtyTimes() {
        for (int pass = 0; pass < 60; pass++) {
            events.warning(md, "Busy", "qwen-server-r1-m0 has 2 requests in flight");
        }

        assertThat(recorded()).singleElement().satisfies(e -> {
            assertThat(e.getCount()).isEqualTo(60);
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(Instant.parse(e.getLastTimestamp())).isAfterOrEqualTo(Instant.parse(e.getFirstTimestamp()));
        });
    }

    @Test
    void aDifferentMessageReasonOrTypeIsAnEventOfItsOwn() {
        events.warning(md, "Busy", "qwen-server-r1-m0 has 2 requests in flight");
        events.warning(md, "Busy", "qwen-server-r1-m0 has 1 requests in flight");
        events.warning(md, "ReadFailed", "qwen-server-r1-m0 has 2 requests in flight");
        events.normal(md, "Busy", "qwen-server-r1-m0 has 2 requests in flight");
        events.warning(md, "Busy", "qwen-server-r1-m0 has 2 requests in flight");

        assertThat(recorded()).hasSize(4);
        assertThat(recorded())
                .filteredOn(e -> e.getCount() == 2)
                .singleElement()
                .satisfies(e -> assertThat(e.getMessage()).isEqualTo("qwen-server-r1-m0 has 2 requests in flight"));
    }

    @Test
    void anEventThatExpiredMeanwhileIsWrittenAgain() {
        events.warning(md, "Busy", "held");
        client.v1().events().inNamespace(NS).delete();
        events.warning(md, "Busy", "held");

        assertThat(recorded())
                .singleElement()
                .satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
    }
}
