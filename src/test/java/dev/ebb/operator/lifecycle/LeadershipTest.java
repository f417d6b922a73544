package dev.ebb.operator.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.config.EbbConfig;
import dev.ebb.operator.config.EbbSettings;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.quarkus.runtime.ShutdownEvent;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LeadershipTest {
    private final AtomicInteger halts = new AtomicInteger();

    private Leadership leadership(Map<String, String> settings) {
        EbbConfig config = EbbSettings.of(settings);
        // a client that is never connected: these paths only ask it for its namespace
        KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withNamespace("operators").build()).build();
        return new Leadership(client, config, halts::incrementAndGet);
    }

    private static LeaderCallbacks callbacks(LeaderElectionConfiguration configuration) {
        return configuration.getLeaderCallbacks().orElseThrow();
    }

    @Test
    void theLeaseNamesComeFromTheSettings() {
        LeaderElectionConfiguration configuration = leadership(Map.of("ebb.leader-election.lease-name", "ebb-team-a",
                "ebb.leader-election.namespace", "ebb-system", "ebb.leader-election.identity", "ebb-operator-7d9f")).leaderElection();

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
