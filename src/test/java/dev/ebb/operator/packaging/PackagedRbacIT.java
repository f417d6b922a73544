package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The RBAC the build packages grants exactly what the operator needs and nothing more: any verb or resource beyond
 * this list fails the build. It reads what `package` wrote, so it runs after it.
 */
class PackagedRbacIT {
    private static final Set<String> READ = Set.of("get", "list", "watch");
    private static final Set<String> OWN = Set.of("get", "list", "watch", "create", "delete", "patch", "update");
    /** apiGroup/resource -> the verbs it may have. */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            Map.entry("/pods", OWN),
            Map.entry("/pods/exec", Set.of("get", "create")),
            Map.entry("/services", OWN),
            // get: fabric8 reads an Event before the merge patch that counts a repeat of it
            Map.entry("/events", Set.of("get", "create", "patch")),
            Map.entry("discovery.k8s.io/endpointslices", READ),
            // read, never created or deleted: the finalizer is patched in and out of the object itself
            Map.entry("serving.ebb.dev/modeldeployments", Set.of("get", "list", "watch", "patch", "update")),
            Map.entry("serving.ebb.dev/modeldeployments/status", Set.of("patch", "update")),
            // owner references that block deletion (the API server's OwnerReferencesPermissionEnforcement)
            Map.entry("serving.ebb.dev/modeldeployments/finalizers", Set.of("update")),
            // the router in front of a deployment, each object watched so that one deleted or edited is put back
            Map.entry("apps/deployments", OWN),
            Map.entry("/serviceaccounts", OWN),
            Map.entry("/configmaps", OWN),
            Map.entry("rbac.authorization.k8s.io/roles", OWN),
            Map.entry("rbac.authorization.k8s.io/rolebindings", OWN),
            Map.entry("policy/poddisruptionbudgets", OWN),
            // node maintenance: a cordon or an autoscaler's taint tells which replicas must move; only read
            Map.entry("/nodes", READ),
            // the SDK checks at start-up that the installed CRD matches the one it was built with
            Map.entry("apiextensions.k8s.io/customresourcedefinitions", Set.of("get", "list")),
            Map.entry("coordination.k8s.io/leases", Set.of("get", "create", "update", "patch")));

    private static <T> List<T> ofType(List<HasMetadata> items, Class<T> type) {
        return items.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static List<PolicyRule> rules() throws Exception {
        List<HasMetadata> items = PackagedManifests.read();
        List<PolicyRule> rules = new ArrayList<>();
        ofType(items, ClusterRole.class).forEach(r -> rules.addAll(r.getRules()));
        ofType(items, Role.class).forEach(r -> rules.addAll(r.getRules()));
        return rules;
    }

    private static boolean grants(PolicyRule rule, String group, String resource) {
        return rule.getApiGroups().contains(group) && rule.getResources().contains(resource);
    }

    @Test
    void everyGrantedVerbIsOneTheOperatorNeeds() throws Exception {
        List<String> beyond = new ArrayList<>();
        for (PolicyRule rule : rules()) {
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    Set<String> allowed = ALLOWED.getOrDefault(group + "/" + resource, Set.of());
                    rule.getVerbs().stream()
                            .filter(verb -> !allowed.contains(verb))
                            .forEach(verb -> beyond.add(verb + " " + group + "/" + resource));
                }
            }
        }

        assertThat(beyond).as("grants beyond what the operator needs").isEmpty();
    }

    @Test
    void theOperatorMayReadItsMembersAndNeverSecrets() throws Exception {
        List<PolicyRule> rules = rules();

        assertThat(rules)
                .noneMatch(r -> r.getResources().contains("secrets")
                        || r.getResources().contains("*")
                        || r.getVerbs().contains("*"));
        assertThat(rules)
                .anyMatch(r ->
                        r.getResources().contains("pods/exec") && r.getVerbs().contains("create"));
        assertThat(rules).anyMatch(r -> grants(r, "discovery.k8s.io", "endpointslices"));
    }

    @Test
    void modelDeploymentsAreNeverCreatedNorDeletedByTheOperator() throws Exception {
        List<PolicyRule> onModelDeployments = rules().stream()
                .filter(r -> r.getApiGroups().contains("serving.ebb.dev"))
                .toList();

        assertThat(onModelDeployments)
                .isNotEmpty()
                .allSatisfy(r -> assertThat(r.getVerbs()).doesNotContain("create", "delete", "deletecollection"));
        // what it does do: read them, write their status, manage its finalizer on them
        assertThat(onModelDeployments)
                .anyMatch(r -> r.getResources().contains("modeldeployments")
                        && r.getVerbs().containsAll(List.of("get", "list", "watch", "patch")));
        assertThat(onModelDeployments)
                .anyMatch(r -> r.getResources().contains("modeldeployments/status")
                        && r.getVerbs().contains("patch"));
    }

    @Test
    void theLeaseIsGrantedOnlyByARoleOfTheOperatorsOwnNamespace() throws Exception {
        List<HasMetadata> items = PackagedManifests.read();
        String namespace =
                ofType(items, ServiceAccount.class).get(0).getMetadata().getNamespace();
        List<Role> leaseRoles = ofType(items, Role.class).stream()
                .filter(role -> role.getRules().stream().anyMatch(r -> grants(r, "coordination.k8s.io", "leases")))
                .toList();

        assertThat(ofType(items, ClusterRole.class))
                .flatMap(ClusterRole::getRules)
                .noneMatch(r -> r.getApiGroups().contains("coordination.k8s.io"));
        assertThat(leaseRoles).singleElement().satisfies(role -> {
            assertThat(role.getMetadata().getNamespace()).isEqualTo(namespace);
            // leader election refuses to start without exactly these
            assertThat(role.getRules()).anyMatch(r -> r.getVerbs().containsAll(List.of("get", "create", "update")));
        });
        assertThat(ofType(items, RoleBinding.class)).anySatisfy(binding -> {
            assertThat(binding.getMetadata().getNamespace()).isEqualTo(namespace);
            assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
            assertThat(binding.getRoleRef().getName())
                    .isEqualTo(leaseRoles.get(0).getMetadata().getName());
            assertThat(binding.getSubjects())
                    .anySatisfy(s -> assertThat(s.getName()).isEqualTo(PackagedManifests.SERVICE_ACCOUNT));
        });
    }

    @Test
    void everyRoleIsBoundToTheOperatorsServiceAccountInItsNamespace() throws Exception {
        List<HasMetadata> items = PackagedManifests.read();
        String namespace =
                ofType(items, ServiceAccount.class).get(0).getMetadata().getNamespace();

        assertThat(ofType(items, ClusterRoleBinding.class))
                .isNotEmpty()
                .allSatisfy(binding -> assertThat(binding.getSubjects())
                        .singleElement()
                        .satisfies(s -> {
                            assertThat(s.getName()).isEqualTo(PackagedManifests.SERVICE_ACCOUNT);
                            assertThat(s.getNamespace()).isEqualTo(namespace);
                        }));
        // no built-in role is bound beside the operator's own (the client extension would bind "view")
        assertThat(ofType(items, RoleBinding.class))
                .allSatisfy(
                        binding -> assertThat(binding.getRoleRef().getKind()).isEqualTo("Role"));
    }

    @Test
    void theWatchedNamespacesComeFromOlmsTargetNamespacesThroughTheDownwardApi() throws Exception {
        Deployment operator = ofType(PackagedManifests.read(), Deployment.class).get(0);
        List<EnvVar> env = operator.getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getEnv();

        assertThat(env)
                .filteredOn(e -> e.getName().equals("EBB_WATCH_NAMESPACES"))
                .singleElement()
                .satisfies(e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                        .isEqualTo("metadata.annotations['olm.targetNamespaces']"));
    }
}
