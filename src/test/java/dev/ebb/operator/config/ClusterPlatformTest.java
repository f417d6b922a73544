package dev.ebb.operator.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ClusterPlatformTest {
    private final MockWebServer server = new MockWebServer();
    private KubernetesClient client;

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        server.shutdown();
    }

    @Test
    void aFailedVersionReadIsNotKeptAndTheNextReadDecides() throws Exception {
        AtomicInteger failuresLeft = new AtomicInteger(1);
        KubernetesClient client = clientOf(new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                if (!"/version".equals(request.getPath())) {
                    return new MockResponse().setResponseCode(404);
                }
                return failuresLeft.getAndDecrement() > 0
                        ? new MockResponse().setResponseCode(503).setBody("{}")
                        : new MockResponse()
                                .setResponseCode(200)
                                .setBody("{\"major\":\"1\",\"minor\":\"30\",\"gitVersion\":\"v1.30.2\"}");
            }
        });
        ClusterPlatform platform = new ClusterPlatform(client);

        assertThat(platform.current()).isEmpty();
        assertThat(platform.current())
                .hasValueSatisfying(read -> assertThat(read.nativeSidecars()).isTrue());
    }

    private KubernetesClient clientOf(Dispatcher dispatcher) throws Exception {
        server.setDispatcher(dispatcher);
        server.start();
        client = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder()
                        .withMasterUrl("http://" + server.getHostName() + ":" + server.getPort())
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build();
        return client;
    }
}
