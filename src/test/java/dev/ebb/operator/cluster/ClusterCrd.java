package dev.ebb.operator.cluster;

import dev.ebb.operator.sim.SimApiServer;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The ModelDeployment CRD the build generated, installed on a real API server as `make deploy` installs it. */
final class ClusterCrd {
    private ClusterCrd() {}

    /** Applies it (server-side, as `kubectl apply --server-side`) and waits until the server serves it. */
    static CustomResourceDefinition install(KubernetesClient admin) {
        CustomResourceDefinition generated = SimApiServer.generatedCrd();
        admin.resource(generated).forceConflicts().serverSideApply();
        return admin.apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName(generated.getMetadata().getName())
                .waitUntilCondition(ClusterCrd::served, Duration.ofSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
    }

    private static boolean served(CustomResourceDefinition crd) {
        // a CRD just applied may show a status without conditions yet
        return crd != null
                && crd.getStatus() != null
                && crd.getStatus().getConditions() != null
                && crd.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals("Established")
                                && c.getStatus().equals("True"));
    }
}
