package dev.ebb.operator.lifecycle;

import dev.ebb.operator.config.EbbConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * One operator Pod acts at a time, the holder of a Lease. QOSDK asks for this configuration only in the profiles it
 * elects in (prod), so elsewhere nothing here runs.
 *
 * <p>Two things the SDK leaves undone are done here. A leader that loses its Lease while running stops at once,
 * since another Pod may already act. And on shutdown, once the SDK has stopped reconciling, the Lease is handed back
 * so a standby takes over within its retry period instead of waiting for the Lease to expire.
 *
 * <p>And a third: the elector notices a lost Lease only on its next renewal, while a paused leader's reconciliation
 * resumes at once. So before taking anything away the operator reads the Lease itself ({@link #stillLeads}).
 */
@ApplicationScoped
public class Leadership implements LeaseGuard {
    private static final Logger LOG = Logger.getLogger(Leadership.class);
    /** What an API server's leader election also writes on release: the Lease is free, and soon stale. */
    private static final Duration RELEASED_LEASE = Duration.ofSeconds(1);

    private final KubernetesClient client;
    private final String leaseName;
    private final Optional<String> namespace;
    private final String identity;
    private final AtomicBoolean electing = new AtomicBoolean();
    private final AtomicBoolean stopping = new AtomicBoolean();
    /** Once leading has ended, every later action is dropped without asking again, while the process ends. */
    private final AtomicBoolean deposed = new AtomicBoolean();

    private final Runnable haltProcess;
    private final Clock clock;
    /** Set with the configuration the SDK elects by, whose durations the spare comes from. */
    private volatile Duration spare = Duration.ZERO;

    @Inject
    public Leadership(KubernetesClient client, EbbConfig config, Clock clock) {
        this(client, config, clock, () -> Runtime.getRuntime().halt(1));
    }

    /**
     * @param haltProcess ends the process at once, skipping the orderly shutdown; public for an operator started outside
     *     Quarkus (the test world's), which calls {@link #shutdownStarted} and {@link #operatorStopped} itself
     */
    public Leadership(KubernetesClient client, EbbConfig config, Clock clock, Runnable haltProcess) {
        this.client = client;
        this.clock = clock;
        this.haltProcess = haltProcess;
        this.leaseName = config.leaderElection().leaseName();
        this.namespace = config.leaderElection().namespace();
        this.identity = config.leaderElection()
                .identity()
                .or(() -> Optional.ofNullable(System.getenv("HOSTNAME")).filter(h -> !h.isBlank()))
                .orElseGet(() -> UUID.randomUUID().toString());
    }

    @Produces
    @Singleton
    public LeaderElectionConfiguration leaderElection() {
        electing.set(true);
        LOG.infof("leader election by Lease %s/%s as %s", leaseNamespace(), leaseName, identity);
        LeaderElectionConfiguration configuration = LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(
                        leaseName)
                .withLeaseNamespace(leaseNamespace())
                .withIdentity(identity)
                .withLeaderCallbacks(new LeaderCallbacks(
                        () -> LOG.infof("%s leads", identity),
                        this::stoppedLeading,
                        leader -> LOG.infof("the leader is %s", leader)))
                .build();
        // A leader that renews on time always has more than this left; one with less has missed renewals for as long
        // as the elector tolerates before it gives up (the renew deadline), so it is as good as deposed.
        spare = configuration.getLeaseDuration().minus(configuration.getRenewDeadline());
        return configuration;
    }

    /**
     * Reads the Lease from the API server. When another holds it, nobody does, or it lapses within the spare, the
     * action is dropped and this Pod stops leading as it does when the elector finds the Lease lost. When the Lease
     * cannot be read the action is dropped too, and the elector, which cannot renew either, decides the rest.
     */
    @Override
    public boolean stillLeads(String before) {
        if (!electing.get()) {
            return true;
        }
        if (deposed.get()) {
            LOG.infof("dropped, since %s no longer leads: %s", identity, before);
            return false;
        }
        LeaseStanding standing;
        try {
            standing = LeaseStanding.judge(
                    Optional.ofNullable(new LeaseLock(leaseNamespace(), leaseName, identity).get(client))
                            .map(Leadership::read),
                    identity,
                    clock.instant(),
                    spare);
        } catch (KubernetesClientException e) {
            LOG.warnf(
                    "not done, since the Lease %s/%s cannot be read (%s): %s",
                    leaseNamespace(), leaseName, e.getMessage(), before);
            return false;
        }
        if (standing instanceof LeaseStanding.Lost lost) {
            LOG.errorf("%s no longer leads (%s); dropped: %s", identity, lost.why(), before);
            stoppedLeading();
            return false;
        }
        return true;
    }

    private static LeaseStanding.Lease read(LeaderElectionRecord record) {
        return new LeaseStanding.Lease(
                Optional.ofNullable(record.getHolderIdentity()),
                Optional.ofNullable(record.getRenewTime()).map(ZonedDateTime::toInstant),
                Optional.ofNullable(record.getLeaseDuration()));
    }

    /** Before the SDK stops: from here on, the end of leading is this Pod's own doing. */
    void onShutdownStarted(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) ShutdownEvent event) {
        shutdownStarted();
    }

    /** After the SDK has stopped and its reconciliations have finished or timed out. */
    void onOperatorStopped(@Observes @Priority(Interceptor.Priority.LIBRARY_AFTER) ShutdownEvent event) {
        operatorStopped();
    }

    public void shutdownStarted() {
        stopping.set(true);
    }

    public void operatorStopped() {
        if (electing.get()) {
            release();
        }
    }

    public String identity() {
        return identity;
    }

    private void stoppedLeading() {
        deposed.set(true);
        if (stopping.get()) {
            return;
        }
        // Another Pod may already hold the Lease: acting on for the few seconds an orderly exit takes could delete
        // a replica twice or undo the new leader's work, so the process ends now and Kubernetes restarts it.
        LOG.errorf("%s lost the Lease %s/%s; stopping at once", identity, leaseNamespace(), leaseName);
        haltProcess.run();
    }

    private void release() {
        LeaseLock lock = new LeaseLock(leaseNamespace(), leaseName, identity);
        try {
            LeaderElectionRecord held = lock.get(client);
            if (held == null || !identity.equals(held.getHolderIdentity())) {
                return;
            }
            ZonedDateTime now = ZonedDateTime.now();
            // an empty holder, not an absent one: an update leaves out absent fields, and the old holder would stay
            lock.update(client, new LeaderElectionRecord("", RELEASED_LEASE, now, now, held.getLeaderTransitions()));
            LOG.infof("%s released the Lease %s/%s", identity, leaseNamespace(), leaseName);
        } catch (KubernetesClientException e) {
            LOG.warnf(
                    "the Lease %s/%s could not be released (%s); a standby takes over when it expires",
                    leaseNamespace(), leaseName, e.getMessage());
        }
    }

    private String leaseNamespace() {
        return namespace.orElseGet(client::getNamespace);
    }
}
