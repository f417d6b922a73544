package dev.ebb.operator.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The namespaces the operator watches, from the raw value of {@code ebb.watch-namespaces}: in a cluster, OLM's
 * {@code olm.targetNamespaces} annotation as the downward API hands it over. OLM writes the OperatorGroup's target
 * namespaces sorted and joined by commas, and "" for all namespaces (OperatorGroup.BuildTargetNamespaces in
 * vendor/github.com/operator-framework/api/pkg/operators/v1/operatorgroup_types.go at operator-lifecycle-manager v0.46.0,
 * where NamespaceAll is ""); the downward API gives "" too when the annotation is absent, as under {@code make deploy}.
 *
 * <p>Whatever comes in gives a scope the operator can run with: blanks mean every namespace; entries are trimmed,
 * empty ones skipped, duplicates merged, and names Kubernetes would refuse are left out (an informer on one would
 * fail at start and stop the operator). A value with no usable name at all narrows to the operator's own namespace,
 * the one its RBAC always covers, rather than widening to every namespace its RBAC may not cover.
 *
 * @param scope which namespaces
 * @param namespaces the names, when {@link Scope#LISTED}; empty otherwise
 * @param refused the entries left out, as given, for the log
 */
public record WatchedNamespaces(Scope scope, SortedSet<String> namespaces, List<String> refused) {
    public enum Scope {
        ALL,
        OWN,
        LISTED
    }

    /** The Java Operator SDK's own values for every namespace and for the client's (Constants.java at JOSDK v5.3.2). */
    static final String SDK_ALL_NAMESPACES = "JOSDK_ALL_NAMESPACES";

    static final String SDK_CURRENT_NAMESPACE = "JOSDK_WATCH_CURRENT";
    /** A namespace's name is a DNS-1123 label: at most 63 lower-case alphanumerics or '-', alphanumeric at both ends. */
    private static final Pattern DNS_1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    public WatchedNamespaces {
        namespaces = Collections.unmodifiableSortedSet(new TreeSet<>(namespaces));
        refused = List.copyOf(refused);
    }

    public static WatchedNamespaces of(String raw) {
        if (raw == null || raw.isBlank()) {
            return new WatchedNamespaces(Scope.ALL, new TreeSet<>(), List.of());
        }
        SortedSet<String> names = new TreeSet<>();
        List<String> refused = new ArrayList<>();
        for (String entry : raw.split(",", -1)) {
            String name = entry.strip();
            if (name.isEmpty()) {
                continue;
            }
            if (DNS_1123_LABEL.matcher(name).matches()) {
                names.add(name);
            } else if (!refused.contains(name)) {
                refused.add(name);
            }
        }
        return new WatchedNamespaces(names.isEmpty() ? Scope.OWN : Scope.LISTED, names, refused);
    }

    /** The value of {@code quarkus.operator-sdk.controllers.<name>.namespaces} that watches exactly these. */
    public String sdkValue() {
        return switch (scope) {
            case ALL -> SDK_ALL_NAMESPACES;
            case OWN -> SDK_CURRENT_NAMESPACE;
            case LISTED -> String.join(",", namespaces);
        };
    }

    /** For the log at start. */
    public String describe() {
        String watched = switch (scope) {
            case ALL -> "every namespace";
            case OWN -> "the operator's own namespace only";
            case LISTED -> "namespace(s) " + String.join(", ", namespaces);
        };
        return refused.isEmpty()
                ? "watching " + watched
                : "watching " + watched + "; left out, not valid namespace names: " + String.join(", ", refused);
    }
}
