package dev.ebb.operator.sandbox;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import dev.ebb.operator.retire.RetirementState;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.SimOperator;
import dev.ebb.operator.sim.SimRouterAddress;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;

/** Ebb's way: a ModelDeployment, and the operator acting on its edits. */
final class OperatorFleet implements Fleet {
    static final String NAME = "qwen";
    static final String ROLE = "server";
    private final KubernetesClient client;
    private final String namespace;
    private final boolean routed;
    private final SimOperator operator;

    /**
     * @param routed whether the ModelDeployment names a router (llm-d-router); without one clients use the role's Service
     * @param settings {@code ebb.*} settings the operator runs with
     */
    OperatorFleet(
            KubernetesClient client,
            String namespace,
            LocalExec exec,
            SimRouterAddress routers,
            boolean routed,
            Map<String, String> settings) {
        this.client = client;
        this.namespace = namespace;
        this.routed = routed;
        this.operator = new SimOperator(client, exec, routers, settings);
    }

    @Override
    public void deploy(int replicas, int grace) {
        Specs.Deployment spec = Specs.deployment(NAME, "vLLM").namespace(namespace);
        if (routed) {
            spec.router("llm-d-router");
        }
        client.resource(spec.role(Specs.role(ROLE).replicas(replicas).grace(grace))
                        .build())
                .create();
    }

    @Override
    public void scaleTo(int replicas) {
        Specs.scale(client, namespace, NAME, ROLE, replicas);
    }

    @Override
    public void rollout(String image) {
        Specs.editRole(client, namespace, NAME, ROLE, r -> Specs.withImage(r, image));
    }

    @Override
    public boolean settled() {
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .withName(NAME)
                .get();
        ModelDeploymentStatus status = md == null ? null : md.getStatus();
        boolean retiring = status != null
                && status.retirements() != null
                && status.retirements().stream()
                        .anyMatch(r -> !RetirementState.valueOf(r.state()).ended());
        if (status == null
                || retiring
                || status.roles() == null
                || status.roles().isEmpty()
                || status.observedGeneration() == null
                || status.observedGeneration() < md.getMetadata().getGeneration()) {
            return false;
        }
        RoleStatus role = status.roles().get(0);
        boolean nothingGoing = client.pods().inNamespace(namespace).list().getItems().stream()
                .noneMatch(p -> p.getMetadata().getDeletionTimestamp() != null);
        return nothingGoing
                && role.current() == role.desired()
                && role.ready() == role.desired()
                && role.updated() == role.desired();
    }

    @Override
    public void close() {
        operator.close();
    }
}
