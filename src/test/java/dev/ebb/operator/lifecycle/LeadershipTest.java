package dev.ebb.operator.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.config.EbbConfig;
import dev.ebb.operator.config.EbbSettings;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.quarkus.runtime.ShutdownEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class LeadershipTest {
    KubernetesMockServer server;
    KubernetesClient client;
    private final AtomicInteger halts = new AtomicInteger();

    private Leadership leadership(Map<String, String> settings) {
        EbbConfig config = EbbSettings.of(settings);
        // a client that is never connected: these paths only ask it for its namespace
        KubernetesClient unconnected = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder().withNamespace("operators").build())
                .build();
        return new Leadership(unconnected, config, Clock.systemUTC(), halts::incrementAndGet);
    }

    private static LeaderCallbacks callbacks(LeaderElectionConfiguration configuration) {
        return configuration.getLeaderCallbacks().orElseThrow();
    }

    /** A Lease as the elector writes it, renewed {@code renewedAgo} before now. */
    private void lease(String holder, Duration renewedAgo) {
        ZonedDateTime renewed = ZonedDateTime.now().minus(renewedAgo);
        client.resource(new LeaseBuilder()
                        .withNewMetadata()
                        .withName("ebb-operator")
                        .withNamespace("ebb-system")
                        .endMetadata()
                        .withNewSpec()
                        .withHolderIdentity(holder)
                        .withLeaseDurationSeconds(15)
                        .withAcquireTime(renewed)
                        .withRenewTime(renewed)
                        .withLeaseTransitions(0)
                        .endSpec()
                        .build())
                .createOr(existing -> existing.update());
    }

    private Leadership electing() {
        Leadership leadership = new Leadership(
                client,
                EbbSettings.of(Map.of(
                        "ebb.leader-election.namespace",
                        "ebb-system",
                        "ebb.leader-election.identity",
                        "ebb-operator-a")),
                Clock.systemUTC(),
                halts::incrementAndGet);
        leadership.leaderElection();
        return leadership;
    }

    @Test
    void aLeaderThatRenewedOnTimeGoesOnAndStaysLeader() {
        lease("ebb-operator-a", Duration.ofSeconds(2));

        assertThat(electing().stillLeads("deleting a Pod")).isTrue();
        assertThat(halts).hasValue(0);
    }

    @Test
    void aLeaderWhoseLeaseAnotherTookDropsTheActionAndStops() {
        lease("ebb-operator-b", Duration.ofSeconds(1));
        Leadership leadership = electing();

        assertThat(leadership.stillLeads("deleting a Pod")).isFalse();
        assertThat(halts).hasValue(1);
        // nothing more is done while the process ends, even if the Lease read well again
        lease("ebb-operator-a", Duration.ZERO);
        assertThat(leadership.stillLeads("removing a worker from the router")).isFalse();
    }

    @Test
    void aLeaderResumedFromAPauseLongerThanItsLeaseDropsTheActionThoughNobodyTookOver() {
        lease("ebb-operator-a", Duration.ofSeconds(12));

        assertThat(electing().stillLeads("deleting a Pod")).isFalse();
        assertThat(halts).hasValue(1);
    }

    @Test
    void aLeaseThatCannotBeReadDropsTheActionAndLeavesTheEndOfLeadingToTheElector() {
        lease("ebb-operator-a", Duration.ofSeconds(1));
        server.expect()
                .get()
                .withPath("/apis/coordination.k8s.io/v1/namespaces/ebb-system/leases/ebb-operator")
                .andReturn(500, "etcd timeout")
                .always();

        // no retries, which would only make the test slower: the answer is the same after them
        KubernetesClient withoutRetries = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(client.getConfiguration())
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build();
        Leadership leadership = new Leadership(
                withoutRetries,
                EbbSettings.of(Map.of(
                        "ebb.leader-election.namespace",
                        "ebb-system",
                        "ebb.leader-election.identity",
                        "ebb-operator-a")),
                Clock.systemUTC(),
                halts::incrementAndGet);
        leadership.leaderElection();

        assertThat(leadership.stillLeads("deleting a Pod")).isFalse();
        assertThat(halts).hasValue(0);
    }

    @Test
    void anOperatorThatDoesNotElectAlwaysGoesOn() {
        lease("ebb-operator-b", Duration.ofSeconds(1));
        Leadership notElecting = new Leadership(
                client,
                EbbSettings.of(Map.of("ebb.leader-election.namespace", "ebb-system")),
                Clock.systemUTC(),
                halts::incrementAndGet);

        assertThat(notElecting.stillLeads("deleting a Pod")).isTrue();
    }

    @Test
    void theLeaseNamesComeFromTheSettings() {
        LeaderElectionConfiguration configuration = leadership(Map.of(
                        "ebb.leader-election.lease-name",
                        "ebb-team-a",
                        "ebb.leader-election.namespace",
                        "ebb-system",
                        "ebb.leader-election.identity",
                        "ebb-operator-7d9f"))
                .leaderElection();

        assertThat(configuration.getLeaseName()).isEqualTo("ebb-team-a");
        assertThat(configuration.getLeaseNamespace()).contains("ebb-system");
        assertThat(configuration.getIdentity()).contains("ebb-operator-7d9f");
    }

    @Test
    void withoutANamespaceTheLeaseIsInTheOperatorsOwn() {
        assertThat(leadership(Map.of()).leaderElection().getLeaseNamespace()).contains("operators");
    }

    @Test
    void losingTheLeaseWhileRunningStopsTheProcessAtOnce() {
        Leadership leadership = leadership(Map.of("ebb.leader-election.namespace", "ebb-system"));

        callbacks(leadership.leaderElection()).onStopLeading();

        assertThat(halts).hasValue(1);
    }

    @Test
    void theEndOfLeadingDuringShutdownIsTheOperatorsOwnDoingAndStopsNothing() {
        Leadership leadership = leadership(Map.of("ebb.leader-election.namespace", "ebb-system"));
        LeaderCallbacks callbacks = callbacks(leadership.leaderElection());

        leadership.onShutdownStarted(new ShutdownEvent());
        callbacks.onStopLeading();

        assertThat(halts).hasValue(0);
    }
}
