package dev.ebb.operator.cluster;

import dev.ebb.operator.packaging.PackagedManifests;
import dev.ebb.operator.packaging.PackagedOperator;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The operator as `make deploy` installs it, on a real control plane: the packaged ServiceAccount, ClusterRoles, Role
 * and bindings applied as they are, and the packaged application run with that ServiceAccount's token, so that every
 * request it makes goes through the real authorizer. Its Deployment is left out: the operator runs beside the
 * cluster here, as the process the Deployment's container would run.
 */
public final class DeployedOperator {
    private static final Set<String> IDENTITY =
            Set.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding");

    private DeployedOperator() {}

    /**
     * The identity the packaged manifests give the operator: its ServiceAccount, ClusterRoles, Role and their bindings,
     * applied as they are, in the operator's namespace. The rest (its Deployment, Service, ServiceMonitor) is not what
     * it runs as.
     */
    public static void installRbac(KubernetesClient admin) {
        admin.resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(PackagedOperator.NAMESPACE)
                        .endMetadata()
                        .build())
                .forceConflicts()
                .serverSideApply();
        for (HasMetadata item : manifests()) {
            if (IDENTITY.contains(item.getKind())) {
                admin.resource(item)
                        .inNamespace(PackagedOperator.NAMESPACE)
                        .forceConflicts()
                        .serverSideApply();
            }
        }
    }

    /** A token of the operator's ServiceAccount, from the TokenRequest API, as the kubelet would project it. */
    public static String token(KubernetesClient admin) {
        TokenRequest request = new TokenRequestBuilder()
                .withNewSpec()
                .withExpirationSeconds(Duration.ofHours(2).toSeconds())
                .endSpec()
                .build();
        return admin.serviceAccounts()
                .inNamespace(PackagedOperator.NAMESPACE)
                .withName(PackagedManifests.SERVICE_ACCOUNT)
                .tokenRequest(request)
                .getStatus()
                .getToken();
    }

    /** Starts the packaged operator on the control plane as its ServiceAccount, after installing its RBAC. */
    public static PackagedOperator start(ControlPlane plane, String identity, Path log, Map<String, String> env)
            throws IOException {
        try (KubernetesClient admin = plane.adminClient()) {
            installRbac(admin);
            return PackagedOperator.startAs(
                    admin.getConfiguration().getMasterUrl(),
                    Path.of(admin.getConfiguration().getCaCertFile()),
                    token(admin),
                    identity,
                    log,
                    env);
        }
    }

    private static List<HasMetadata> manifests() {
        try {
            return PackagedManifests.read();
        } catch (IOException e) {
            throw new UncheckedIOException("the packaged manifests are missing; `./mvnw package` writes them", e);
        }
    }
}
