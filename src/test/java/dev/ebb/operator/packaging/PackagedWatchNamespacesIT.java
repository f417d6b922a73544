package dev.ebb.operator.packaging;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged operator given a hand-written target list, as OLM's olm.targetNamespaces annotation reaches it through
 * the Deployment's EBB_WATCH_NAMESPACES: it acts in the namespace named, not in another, and says what it left out.
 */
class PackagedWatchNamespacesIT {
    /** The kinds the operator caches: a GET of one of them as a collection is a list or a watch. */
    private static final Pattern CACHED =
            Pattern.compile("/(pods|services|endpointslices|deployments|modeldeployments)(\\?|$)");

    private static final Path LOG = Path.of("target", "packaged-watch-namespaces-operator.log");

    private KubernetesMockServer server;
    private KubernetesClient client;
    private PackagedOperator operator;

    @BeforeEach
    void start() throws Exception {
        server = SimApiServer.startServer(PackagedOperator.packagedRules());
        client = server.createClient();
        client.resource(SimApiServer.generatedCrd()).create();
    }

    private void startWatching(String targetNamespaces) throws Exception {
        operator = PackagedOperator.start(
                client, "ebb-operator-watch", LOG, Map.of("EBB_WATCH_NAMESPACES", targetNamespaces));
        await("the operator ready")
                .atMost(Duration.ofSeconds(60))
                .until(() -> operator.status("/q/health/ready") == 200);
    }

    @AfterEach
    void stop() {
        if (operator != null) {
            operator.close();
        }
        client.close();
        server.destroy();
    }

    @Test
    void itActsInTheNamespacesItWatchesAndNowhereElse() throws Exception {
        // spaces, an empty entry, a duplicate and a name Kubernetes refuses
        startWatching(" team-a ,, Bad_Name,team-a");
        client.resource(deployment("elsewhere", "vLLM")
                        .namespace("team-b")
                        .role(role("server").replicas(1))
                        .build())
                .create();
        client.resource(deployment("qwen", "vLLM")
                        .namespace("team-a")
                        .role(role("server").replicas(1))
                        .build())
                .create();

        await("the watched deployment's Pod")
                .atMost(Duration.ofSeconds(30))
                .until(() ->
                        !client.pods().inNamespace("team-a").list().getItems().isEmpty());
        // created before the watched one, so by now it would have been acted on if it were watched
        assertThat(client.pods().inNamespace("team-b").list().getItems()).isEmpty();
        assertThat(operator.log())
                .contains("watching namespace(s) team-a; left out, not valid namespace names: Bad_Name");
        // every cache, not only the ModelDeployments', lists and watches in the watched namespace alone: a
        // cluster-wide list would need RBAC that OLM does not grant outside the target namespaces
        List<String> reads = new ArrayList<>();
        for (RecordedRequest request = server.takeRequest(1, TimeUnit.MILLISECONDS);
                request != null;
                request = server.takeRequest(1, TimeUnit.MILLISECONDS)) {
            // an informer lists and watches from a resourceVersion; this test's own plain lists carry none
            if ("GET".equals(request.getMethod())
                    && CACHED.matcher(request.getPath()).find()
                    && request.getPath().contains("resourceVersion=")) {
                reads.add(request.getPath());
            }
        }
        assertThat(reads)
                .as("the caches' lists and watches")
                .isNotEmpty()
                .allSatisfy(path -> assertThat(path).contains("/namespaces/team-a/"));
        assertThat(reads)
                .anyMatch(path -> path.contains("/pods"))
                .anyMatch(path -> path.contains("/services"))
                .anyMatch(path -> path.contains("/endpointslices"))
                .anyMatch(path -> path.contains("/deployments"));
    }

    /** MultiNamespace: OLM joins the target namespaces with commas (operatorgroup_types.go BuildTargetNamespaces). */
    @Test
    void givenSeveralNamespacesItActsInEachOfThemAndNotBeyond() throws Exception {
        startWatching("team-a,team-b");
        client.resource(deployment("outside", "vLLM")
                        .namespace("team-c")
                        .role(role("server").replicas(1))
                        .build())
                .create();
        client.resource(deployment("qwen", "vLLM")
                        .namespace("team-a")
                        .role(role("server").replicas(1))
                        .build())
                .create();
        client.resource(deployment("other", "vLLM")
                        .namespace("team-b")
                        .role(role("server").replicas(1))
                        .build())
                .create();

        await("a Pod in each watched namespace")
                .atMost(Duration.ofSeconds(30))
                .until(() ->
                        !client.pods().inNamespace("team-a").list().getItems().isEmpty()
                                && !client.pods()
                                        .inNamespace("team-b")
                                        .list()
                                        .getItems()
                                        .isEmpty());
        // created first, so by now it would have been acted on if it were watched
        assertThat(client.pods().inNamespace("team-c").list().getItems()).isEmpty();
    }

    @Test
    void theEmptyListOlmWritesForAllNamespacesAndTheDownwardApiGivesWithoutOlmWatchesEveryNamespace() throws Exception {
        startWatching("");
        client.resource(deployment("qwen", "vLLM")
                        .namespace("team-a")
                        .role(role("server").replicas(1))
                        .build())
                .create();
        client.resource(deployment("other", "vLLM")
                        .namespace("team-b")
                        .role(role("server").replicas(1))
                        .build())
                .create();

        await("a Pod in each namespace")
                .atMost(Duration.ofSeconds(30))
                .until(() ->
                        !client.pods().inNamespace("team-a").list().getItems().isEmpty()
                                && !client.pods()
                                        .inNamespace("team-b")
                                        .list()
                                        .getItems()
                                        .isEmpty());
    }
}
