package dev.ebb.operator.sim;

import dev.ebb.operator.config.ClusterPlatform;
import dev.ebb.operator.config.EbbConfig;
import dev.ebb.operator.config.EbbSettings;
import dev.ebb.operator.config.Resolvers;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.drain.DrainTimelines;
import dev.ebb.operator.lifecycle.Leadership;
import dev.ebb.operator.lifecycle.LeaseGuard;
import dev.ebb.operator.observe.EventRecorder;
import dev.ebb.operator.observe.ReplicaGauges;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.reconcile.CandidateReads;
import dev.ebb.operator.reconcile.EngineObjects;
import dev.ebb.operator.reconcile.ModelDeploymentReconciler;
import dev.ebb.operator.reconcile.OwnedObjects;
import dev.ebb.operator.reconcile.ReadLedger;
import dev.ebb.operator.reconcile.RetirementActions;
import dev.ebb.operator.reconcile.RetirementObserver;
import dev.ebb.operator.reconcile.RetirementRunner;
import dev.ebb.operator.reconcile.RouterObjects;
import dev.ebb.operator.render.PodRenderer;
import dev.ebb.operator.retire.RetirementMachine;
import dev.ebb.operator.route.HttpRouterProbe;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetricsV2;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One operator process in the test world, outside Quarkus: its own reconciler, member reads and metrics, and nothing
 * shared with an operator started before it, as after a restart. Member reads go through the local exec. It reaches
 * the API server through a client of its own, which a crash closes first: the SDK's stop only interrupts a
 * reconciliation, and an interrupted one still sends its next request, where a killed process sends nothing.
 */
public final class SimOperator implements AutoCloseable {
    private final KubernetesClient client;
    private final Operator operator;
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final Optional<Leadership> leadership;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final ProcessPause pause = new ProcessPause();

    public SimOperator(KubernetesClient client, LocalExec exec, SimRouterAddress routers) {
        this(client, exec, routers, Map.of());
    }

    /** @param settings {@code ebb.*} settings, read as a deployed operator reads them: one it does not know is left out */
    public SimOperator(
            KubernetesClient client, LocalExec exec, SimRouterAddress routers, Map<String, String> settings) {
        this(client, exec, routers, settings, DrainHook.SCRIPT);
    }

    /**
     * @param hookScript the drain hook this operator renders: another text stands for another release of the operator,
     *     one that differs from this in its hook alone
     */
    public SimOperator(
            KubernetesClient client,
            LocalExec exec,
            SimRouterAddress routers,
            Map<String, String> settings,
            String hookScript) {
        this(client, exec, routers, settings, hookScript, false);
    }

    /**
     * An operator that acts only while it holds the Lease, as the deployed one does (its {@link Leadership}, with the
     * SDK's durations). Where the deployed process exits on losing the Lease, this one stops in place.
     *
     * @param leaseNamespace and {@code identity}: where its Lease lives and the name it holds it by
     */
    public static SimOperator electing(
            KubernetesClient client, LocalExec exec, SimRouterAddress routers, String leaseNamespace, String identity) {
        return new SimOperator(
                client,
                exec,
                routers,
                Map.of("ebb.leader-election.namespace", leaseNamespace, "ebb.leader-election.identity", identity),
                DrainHook.SCRIPT,
                true);
    }

    private SimOperator(
            KubernetesClient given,
            LocalExec exec,
            SimRouterAddress routers,
            Map<String, String> settings,
            String hookScript,
            boolean electing) {
        KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(given.getConfiguration())
                .withHttpClientBuilderConsumer(http -> http.addOrReplaceInterceptor("process-pause", pause))
                .build();
        this.client = client;
        PodRenderer renderer = new PodRenderer(new DrainTimelines(), hookScript);
        EventRecorder events = new EventRecorder(client);
        ReadLedger reads = new ReadLedger(new MemberReader(exec, registry));
        EbbConfig config = EbbSettings.ignoringUnknown(settings);
        // the deployed process halts on a lost Lease; the callback runs on the elector's thread, which the stop ends
        leadership = electing
                ? Optional.of(new Leadership(
                        client,
                        config,
                        Clock.systemUTC(),
                        () -> new Thread(
                                        () -> {
                                            pause.awaitHaltAllowed();
                                            crash();
                                        },
                                        "sim-operator-halt")
                                .start()))
                : Optional.empty();
        LeaseGuard lease = leadership.<LeaseGuard>map(l -> l).orElse(LeaseGuard.NOT_ELECTING);
        HttpRouterProbe router = new HttpRouterProbe(routers);
        RetirementRunner runner =
                new RetirementRunner(new RetirementObserver(reads, router), config, new RetirementMachine());
        operator = new Operator(o -> {
            o.withKubernetesClient(client)
                    .withCloseClientOnStop(false)
                    // the SDK's own meters, as the deployed operator serves them
                    .withMetrics(MicrometerMetricsV2.newBuilder(registry).build())
                    // the mock API server has no server-side apply
                    .withUseSSAToPatchPrimaryResource(false);
            leadership
                    .map(Leadership::leaderElection)
                    .map(SimOperator::stayingInProcess)
                    .ifPresent(o::withLeaderElectionConfiguration);
        });
        OwnedObjects owned = new OwnedObjects(client, lease);
        operator.register(new ModelDeploymentReconciler(
                events,
                config,
                Resolvers.of(config),
                runner,
                new RetirementActions(client, reads, router, events, registry, lease),
                reads,
                new CandidateReads(reads),
                new RouterObjects(owned),
                new EngineObjects(client, owned, events),
                owned,
                new ClusterPlatform(client),
                new ReplicaGauges(registry),
                renderer,
                Clock.systemUTC()));
        operator.start();
    }

    /** Where a test pauses this operator's process and resumes it. */
    public ProcessPause pause() {
        return pause;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** The SDK would end the whole process when leading stops; here only this operator stops. */
    private static LeaderElectionConfiguration stayingInProcess(LeaderElectionConfiguration c) {
        return new LeaderElectionConfiguration(
                c.getLeaseName(),
                c.getLeaseNamespace().orElse(null),
                c.getLeaseDuration(),
                c.getRenewDeadline(),
                c.getRetryPeriod(),
                c.getIdentity().orElse(null),
                c.getLeaderCallbacks().orElse(null),
                false);
    }

    /** Whether it has stopped: crashed, closed, or ended on a lost Lease. */
    public boolean stopped() {
        return stopped.get();
    }

    /** The identity it holds the Lease by, when it elects. */
    public Optional<String> identity() {
        return leadership.map(Leadership::identity);
    }

    /**
     * Stops as a killed process does: whatever it was doing ends, and a Lease it held stays taken until it expires.
     * Synchronized with {@link #close}: a halt on a lost Lease (on its own thread) and a test's close could otherwise
     * interleave, the close handing back the Lease through a client the halt had just closed. The deployed process
     * halts at once, so it never meets that.
     */
    public synchronized void crash() {
        if (!stopped.get()) {
            client.close();
        }
        // what a pause held fails now on the closed client, as a killed process's requests never arrive
        pause.thaw();
        pause.endHeldHalt();
        stopReconciling();
    }

    /** Stops as SIGTERM stops the deployed operator: reconciliations end, then a Lease it held is handed back. */
    @Override
    public synchronized void close() {
        if (pause.isFrozen()) {
            // a paused process cannot stop in order
            crash();
            return;
        }
        boolean running = !stopped.get();
        stopReconciling();
        if (running) {
            leadership.ifPresent(Leadership::operatorStopped);
        }
        client.close();
    }

    private void stopReconciling() {
        leadership.ifPresent(Leadership::shutdownStarted);
        if (stopped.compareAndSet(false, true)) {
            operator.stop();
        }
    }
}
