package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The RBAC the build packages from the controller's rules grants exactly what the operator needs and nothing more:
 * any verb or resource beyond this list fails the build. It reads what `package` wrote, so it runs after it.
 */
class PackagedRbacIT {
    private static final Set<String> READ = Set.of("get", "list", "watch");
    private static final Set<String> OWN = Set.of("get", "list", "watch", "create", "delete", "patch", "update");
    /** apiGroup/resource -> the verbs it may have. */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            Map.entry("/pods", OWN),
            Map.entry("/pods/exec", Set.of("get", "create")),
            Map.entry("/services", OWN),
            Map.entry("/events", Set.of("create", "patch")),
            Map.entry("discovery.k8s.io/endpointslices", READ),
            Map.entry("serving.ebb.dev/modeldeployments", OWN),
            Map.entry("serving.ebb.dev/modeldeployments/status", OWN),
            Map.entry("serving.ebb.dev/modeldeployments/finalizers", OWN),
            // the router in front of a deployment
            Map.entry("apps/deployments", OWN),
            Map.entry("/serviceaccounts", Set.of("get", "create", "delete", "patch", "update")),
            Map.entry("/configmaps", Set.of("get", "create", "delete", "patch", "update")),
            Map.entry("rbac.authorization.k8s.io/roles", Set.of("get", "create", "delete", "patch", "update")),
            Map.entry("rbac.authorization.k8s.io/rolebindings", Set.of("get", "create", "delete", "patch", "update")),
            // the SDK checks at start-up that the installed CRD matches the one it was built with
            Map.entry("apiextensions.k8s.io/customresourcedefinitions", Set.of("get", "list")),
            Map.entry("coordination.k8s.io/leases", Set.of("get", "create", "update")));

    private static List<PolicyRule> rules() throws Exception {
        List<HasMetadata> items = PackagedManifests.read();
        List<PolicyRule> rules = new ArrayList<>();
        items.stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast).forEach(r -> rules.addAll(r.getRules()));
        items.stream().filter(Role.class::isInstance).map(Role.class::cast).forEach(r -> rules.addAll(r.getRules()));
        return rules;
    }

    @Test
    void everyGrantedVerbIsOneTheOperatorNeeds() throws Exception {
        List<String> beyond = new ArrayList<>();
        for (PolicyRule rule : rules()) {
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    Set<String> allowed = ALLOWED.getOrDefault(group + "/" + resource, Set.of());
                    rule.getVerbs().stream().filter(verb -> !allowed.contains(verb))
                            .forEach(verb -> beyond.add(verb + " " + group + "/" + resource));
                }
            }
        }

        assertThat(beyond).as("grants beyond what the operator needs").isEmpty();
    }

    @Test
    void theOperatorMayReadItsMembersAndNeverSecrets() throws Exception {
        List<PolicyRule> rules = rules();

        assertThat(rules).noneMatch(r -> r.getResources().contains("secrets") || r.getResources().contains("*") || r.getVerbs().contains("*"));
        assertThat(rules).anyMatch(r -> r.getResources().contains("pods/exec") && r.getVerbs().contains("create"));
        assertThat(rules).anyMatch(r -> r.getApiGroups().contains("discovery.k8s.io") && r.getResources().contains("endpointslices"));
        // leader election refuses to start without exactly these
        assertThat(rules).anyMatch(r -> r.getApiGroups().contains("coordination.k8s.io") && r.getResources().contains("leases")
                && r.getVerbs().containsAll(List.of("get", "create", "update")));
    }
}
