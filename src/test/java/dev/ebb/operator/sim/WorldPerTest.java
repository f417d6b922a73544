package dev.ebb.operator.sim;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.arc.Arc;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The test world around the operator a Quarkus test starts, fresh for each test: the simulated kubelet and endpoints
 * on the test's API server, namespaces of the test's own, fake routers the operator asks, and whatever else the test
 * opens. After the test it closes what was opened, last first, takes the fake routers away, moves the operator's clock
 * back to real time, deletes the ModelDeployments of the test's namespaces and closes the world.
 *
 * <p>Registered on an instance field ({@code @RegisterExtension final WorldPerTest world = new WorldPerTest();}), so
 * that each test has its own.
 */
public final class WorldPerTest implements BeforeEachCallback, AfterEachCallback {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();

    private final List<String> namespaces = new ArrayList<>();
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();
    /** The fake routers in front of each deployment, by namespace and deployment. */
    private final Map<List<String>, List<FakeRouter>> routed = new LinkedHashMap<>();

    private KubernetesClient client;
    private SimWorld world;

    @Override
    public void beforeEach(ExtensionContext context) {
        client = bean(KubernetesClient.class);
        world = new SimWorld(client);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        while (!opened.isEmpty()) {
            opened.pop().close();
        }
        bean(SimClock.class).reset();
        routed.forEach((key, routers) -> {
            bean(SimRouterAddress.class).remove(key.get(0), key.get(1));
            routers.forEach(FakeRouter::close);
        });
        namespaces.forEach(namespace -> client.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .list()
                .getItems()
                .forEach(md -> client.resources(ModelDeployment.class)
                        .inNamespace(namespace)
                        .withName(md.getMetadata().getName())
                        .delete()));
        world.close();
    }

    public SimKubelet kubelet() {
        return world.kubelet();
    }

    public SimEndpoints endpoints() {
        return world.endpoints();
    }

    /** A namespace no other test uses, whose ModelDeployments are deleted after the test. */
    public String namespace(String prefix) {
        String namespace = prefix + "-" + NAMESPACES.incrementAndGet();
        namespaces.add(namespace);
        return namespace;
    }

    /** A fake router in front of the deployment's serving Pods, the one the operator asks for its router. */
    public FakeRouter routerInFrontOf(String namespace, String deployment, RouterKind kind) {
        return routersInFrontOf(namespace, deployment, kind, 1).get(0);
    }

    /** A router of several replicas, each a fake router with its own view of the Pods. */
    public List<FakeRouter> routersInFrontOf(String namespace, String deployment, RouterKind kind, int replicas) {
        List<FakeRouter> routers = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            routers.add(FakeRouter.inFrontOf(client, namespace, deployment, kind));
        }
        bean(SimRouterAddress.class).put(namespace, deployment, kind, routers.toArray(FakeRouter[]::new));
        routed.computeIfAbsent(List.of(namespace, deployment), key -> new ArrayList<>())
                .addAll(routers);
        return List.copyOf(routers);
    }

    /** Closed after the test, before the world. */
    public <T extends AutoCloseable> T closing(T closeable) {
        opened.push(closeable);
        return closeable;
    }

    private static <T> T bean(Class<T> type) {
        return Arc.container().instance(type).get();
    }
}
