package dev.ebb.operator.sandbox;

import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.DaemonThreads;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.KubeProxyService;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.LoopbackAddresses;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.awaitility.Awaitility;

/**
 * Plays a choreography in a fresh test world: its own API server, kubelet, endpoints, and clients streaming a fixed set
 * of requests either through an llm-d router in front of the role or through the role's Service as kube-proxy carries
 * it, with Ebb or a plain controller owning the replicas. Ends once every request of the set has ended and the role has
 * settled.
 */
public final class Scenario {
    private static final String NAMESPACE = "sandbox";
    private static final Duration SETTLE_LIMIT = Duration.ofMinutes(10);
    private static final Duration SETTLED_FOR = Duration.ofSeconds(3);
    /** How long an EndpointSlice change takes to reach the clients' node here: inside the operator's margin for it (5 s). */
    private static final Duration KUBE_PROXY_LAG = Duration.ofSeconds(2);

    /** Held here so the levels stick. */
    private static final List<Logger> CHATTY = List.of(
            Logger.getLogger("io.fabric8"), Logger.getLogger("io.javaoperatorsdk"), Logger.getLogger("dev.ebb"));

    private Scenario() {}

    /** The mock API server, the SDK and the operator log every request and decision, which would bury what is printed. */
    public static void quietLogs() {
        CHATTY.forEach(l -> l.setLevel(Level.SEVERE));
    }

    /** @param progress receives a one-line summary a few times a second */
    public static Run play(Removal removal, Choreography choreography, Consumer<String> progress)
            throws InterruptedException {
        KubernetesMockServer server = SimApiServer.startServer();
        KubernetesClient client = server.createClient();
        SimRouterAddress routers = new SimRouterAddress();
        boolean routed = choreography.path() == Choreography.ClientPath.ROUTER;
        Instant origin = Instant.now();
        Timeline timeline = new Timeline(origin);
        ScheduledExecutorService watch =
                Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("scenario-progress"));
        AtomicReference<String> step = new AtomicReference<>("deploying");
        Choreography.Load plan = choreography.load();
        List<AutoCloseable> paths = new ArrayList<>();
        try (SimWorld world = new SimWorld(client);
                LocalExec exec = new LocalExec();
                Fleet fleet = removal.operated()
                        ? new OperatorFleet(client, NAMESPACE, exec, routers, routed, removal.operatorSettings())
                        : new PlainFleet(client, NAMESPACE, removal);
                FixedLoad load = new FixedLoad(plan)) {
            Supplier<List<String>> serving;
            Supplier<FixedLoad.Client> clients;
            if (routed) {
                FakeRouter router =
                        FakeRouter.inFrontOf(client, NAMESPACE, OperatorFleet.NAME, RouterKind.LLM_D_ROUTER);
                LoadGenerator entry = new LoadGenerator(router, 1, plan.minTokens(), plan.tokenInterval());
                paths.add(router);
                paths.add(entry);
                routers.put(NAMESPACE, OperatorFleet.NAME, RouterKind.LLM_D_ROUTER, router);
                serving = router::selected;
                clients = () -> FixedLoad.throughRouter(entry);
            } else {
                KubeProxyService service = new KubeProxyService(
                        world.endpoints(),
                        NAMESPACE,
                        Names.roleService(OperatorFleet.NAME, OperatorFleet.ROLE),
                        KUBE_PROXY_LAG,
                        new LoopbackAddresses().next());
                paths.add(service);
                serving = service::reachable;
                clients = () -> FixedLoad.throughService(service, plan.tokenInterval());
            }
            // the replicas' Pods, which carry their role; the router's own Pods are no replica's timeline
            SharedIndexInformer<Pod> pods =
                    client.pods().inNamespace(NAMESPACE).withLabel(Labels.ROLE).inform(timeline);
            watch.scheduleAtFixedRate(
                    () -> {
                        try {
                            timeline.observe(client.resources(ModelDeployment.class)
                                    .inNamespace(NAMESPACE)
                                    .withName(OperatorFleet.NAME)
                                    .get());
                        } catch (KubernetesClientException e) {
                            // a slow answer on a loaded machine: the next tick reads the status again; a throw here
                            // would end the schedule and the timeline's retirement marks with it
                        }
                        progress.accept(String.format(
                                Locale.ROOT,
                                "%s %3.0f s %s: %d serving, %d done, %d cut",
                                removal.label(),
                                timeline.since(Instant.now()),
                                step.get(),
                                serving.get().size(),
                                load.count(LoadGenerator.Outcome.COMPLETED),
                                load.count(LoadGenerator.Outcome.CUT)));
                    },
                    0,
                    250,
                    TimeUnit.MILLISECONDS);

            fleet.deploy(choreography.replicas(), choreography.grace());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> serving.get().size() == choreography.replicas());
            step.set("load");
            timeline.step(Timeline.LOAD_STARTS);
            load.start(clients, plan.stagger());
            Thread.sleep(choreography.warmUp().toMillis());
            Instant changed = null;
            for (Choreography.Step next : choreography.steps()) {
                step.set(next.toString());
                timeline.step(next.toString());
                changed = changed == null ? Instant.now() : changed;
                if (next instanceof Choreography.ScaleTo scale) {
                    untilAnswered(() -> fleet.scaleTo(scale.replicas()));
                } else if (next instanceof Choreography.Rollout rollout) {
                    untilAnswered(() -> fleet.rollout(rollout.image()));
                }
            }
            step.set("last requests");
            Awaitility.await()
                    .atMost(SETTLE_LIMIT)
                    .pollInterval(Duration.ofMillis(250))
                    .until(load::done);
            timeline.step("every request has ended");
            step.set("settling");
            // held for a while: a role can look settled for a moment between two decisions of its owner
            Awaitility.await()
                    .atMost(SETTLE_LIMIT)
                    .during(SETTLED_FOR)
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptionsInstanceOf(KubernetesClientException.class)
                    .until(fleet::settled);
            timeline.step("settled");
            watch.shutdown();
            watch.awaitTermination(1, TimeUnit.SECONDS);
            pods.close();
            world.kubelet().terminations().stream()
                    .filter(t -> NAMESPACE.equals(t.namespace()))
                    .forEach(timeline::terminated);
            load.requests().stream()
                    .filter(r -> r.outcome() == LoadGenerator.Outcome.CUT)
                    .forEach(timeline::cut);
            return new Run(
                    removal,
                    choreography,
                    origin,
                    timeline.since(Instant.now()),
                    load.requests(),
                    load.refusals(),
                    changed,
                    timeline.marks());
        } finally {
            watch.shutdownNow();
            for (AutoCloseable path : paths) {
                try {
                    path.close();
                } catch (Exception e) {
                    // the world goes away with it
                }
            }
            client.close();
            server.destroy();
        }
    }

    /**
     * An edit the API server must take, sent again while it times out: each world's mock API server shares the machine
     * with the others and a stall of a few seconds under load is no reason to end the run (seen: a GET over 10 s).
     */
    private static void untilAnswered(Runnable edit) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .ignoreExceptionsInstanceOf(KubernetesClientException.class)
                .until(() -> {
                    edit.run();
                    return true;
                });
    }
}
