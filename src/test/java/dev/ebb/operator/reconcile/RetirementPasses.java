package dev.ebb.operator.reconcile;

import dev.ebb.operator.config.EbbSettings;
import dev.ebb.operator.lifecycle.LeaseGuard;
import dev.ebb.operator.observe.EventRecorder;
import dev.ebb.operator.read.ExecResult;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.retire.RetirementMachine;
import dev.ebb.operator.route.RouterProbe;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.util.Map;

/**
 * A retirement pass's shells wired as the operator wires them, over one client, router probe and Lease, with members
 * that cannot be read: the withdrawal is what these tests look at.
 */
record RetirementPasses(RetirementRunner runner, RetirementActions actions) {
    static RetirementPasses unread(KubernetesClient client, RouterProbe router, LeaseGuard lease) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ReadLedger reads = new ReadLedger(new MemberReader(
                (pod, container, argv, limits) -> Uni.createFrom().item(new ExecResult.Failed("not read here")),
                registry));
        return new RetirementPasses(
                new RetirementRunner(
                        new RetirementObserver(reads, router), EbbSettings.of(Map.of()), new RetirementMachine()),
                new RetirementActions(client, reads, router, new EventRecorder(client), registry, lease));
    }
}
