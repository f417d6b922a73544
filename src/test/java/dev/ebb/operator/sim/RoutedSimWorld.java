package dev.ebb.operator.sim;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Everything a test needs to run operators of its own ({@link SimOperator}) outside Quarkus: the API server with its
 * admission and fault switches, the world around it, a local exec, and a fake llm-d-router in front of one deployment.
 * Closing it closes every part, and every client it handed out, in the order that leaves nothing running. Registered on
 * an instance field ({@code @RegisterExtension final RoutedSimWorld sim = new RoutedSimWorld(NS, "qwen");}), each test
 * has one of its own, closed after the test.
 */
public final class RoutedSimWorld implements AutoCloseable, AfterEachCallback {
    private final AdmittingDispatcher apiServer = SimApiServer.dispatcher();
    private final KubernetesMockServer server;
    private final KubernetesClient client;
    private final SimWorld world;
    private final LocalExec exec = new LocalExec();
    private final SimRouterAddress routers = new SimRouterAddress();
    private final FakeRouter router;
    private final List<KubernetesClient> handedOut = new CopyOnWriteArrayList<>();

    public RoutedSimWorld(String namespace, String deployment) {
        server = SimApiServer.startServer(apiServer);
        client = server.createClient();
        world = new SimWorld(client);
        router = FakeRouter.inFrontOf(client, namespace, deployment, RouterKind.LLM_D_ROUTER);
        routers.put(namespace, deployment, RouterKind.LLM_D_ROUTER, router);
    }

    public AdmittingDispatcher apiServer() {
        return apiServer;
    }

    /** The world's own client: the test's, the kubelet's and the router's. */
    public KubernetesClient client() {
        return client;
    }

    public SimWorld world() {
        return world;
    }

    public LocalExec exec() {
        return exec;
    }

    public SimRouterAddress routers() {
        return routers;
    }

    public FakeRouter router() {
        return router;
    }

    /** A client that reports a failed answer at once, as an operator under test may be given. */
    public KubernetesClient clientWithoutRetries() {
        return handOut(SimApiServer.clientWithoutRetries(server));
    }

    /** The same with a User-Agent of its own, which the API server can single out ({@link UnreliableApi}). */
    public KubernetesClient clientWithoutRetries(String userAgent) {
        return handOut(SimApiServer.clientWithoutRetries(server, userAgent));
    }

    private KubernetesClient handOut(KubernetesClient other) {
        handedOut.add(other);
        return other;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        apiServer.reliable();
        router.close();
        world.close();
        exec.close();
        handedOut.forEach(KubernetesClient::close);
        client.close();
        server.destroy();
    }
}
