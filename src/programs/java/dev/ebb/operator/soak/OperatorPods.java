package dev.ebb.operator.soak;

import static org.awaitility.Awaitility.await;

import dev.ebb.operator.config.EbbSettings;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The operator as a Deployment of two Pods: each elects through the Lease the deployed operator uses, so one acts and
 * the other stands by. A killed leader's Lease stays taken until it expires; one stopped in order hands it back.
 */
final class OperatorPods implements Chaos.Operators, AutoCloseable {
    /** Where the Lease lives: the operator's own namespace, apart from the deployments'. */
    static final String LEASE_NAMESPACE = "ebb-system";
    /** The Lease's name, as the deployed operator's configuration defaults it. */
    private static final String LEASE =
            EbbSettings.ignoringUnknown(Map.of()).leaderElection().leaseName();

    private static final int PODS = 2;

    private final KubernetesClient client;
    private final SimRouterAddress routers;
    private final List<SimOperator> running = new CopyOnWriteArrayList<>();
    private LocalExec exec;
    private int started;

    OperatorPods(KubernetesClient client, SimRouterAddress routers) {
        this.client = client;
        this.routers = routers;
    }

    /** Starts both Pods; the first to take the Lease leads. */
    void start(LocalExec exec) {
        this.exec = exec;
        while (running.size() < PODS) {
            startOne();
        }
    }

    private void startOne() {
        started++;
        running.add(SimOperator.electing(client, exec, routers, LEASE_NAMESPACE, "ebb-operator-" + started));
    }

    /** The Pod holding the Lease, or any when none holds it yet (or the Lease cannot be read now). */
    private SimOperator leader() {
        Optional<String> holder;
        try {
            holder = Optional.ofNullable(client.leases()
                            .inNamespace(LEASE_NAMESPACE)
                            .withName(LEASE)
                            .get())
                    .map(Lease::getSpec)
                    .map(s -> s.getHolderIdentity());
        } catch (KubernetesClientException e) {
            holder = Optional.empty();
        }
        Optional<String> leading = holder;
        return running.stream()
                .filter(o -> leading.isPresent() && Objects.equals(o.identity().orElse(null), leading.get()))
                .findFirst()
                .orElse(running.get(0));
    }

    @Override
    public void restart(Duration down) {
        SimOperator killed = leader();
        running.remove(killed);
        killed.crash();
        sleep(down.toMillis());
        startOne();
    }

    @Override
    public void changeLeader() {
        SimOperator leaving = leader();
        running.remove(leaving);
        leaving.close();
        startOne();
    }

    @Override
    public void pauseLeader(Duration paused) {
        SimOperator leader = leader();
        boolean led = holds(leader);
        leader.pause().freezeNow();
        sleep(paused.toMillis());
        leader.pause().thaw();
        leader.pause().endHeldHalt();
        // the resumed elector renews within its retry period, or finds the Lease another's and ends the process; a
        // paused standby (the Lease unreadable when the leader was looked for) just goes on standing by
        await().atMost(Duration.ofSeconds(30)).until(() -> !led || leader.stopped() || holds(leader));
        if (leader.stopped()) {
            running.remove(leader);
            startOne();
        }
    }

    private boolean holds(SimOperator operator) {
        try {
            return Optional.ofNullable(client.leases()
                            .inNamespace(LEASE_NAMESPACE)
                            .withName(LEASE)
                            .get())
                    .map(Lease::getSpec)
                    .map(s -> s.getHolderIdentity())
                    .equals(operator.identity());
        } catch (KubernetesClientException e) {
            return false;
        }
    }

    @Override
    public void close() {
        running.forEach(SimOperator::close);
        running.clear();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
