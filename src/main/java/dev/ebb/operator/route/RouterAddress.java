package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Pod;
import java.net.URI;
import java.util.Optional;

/** Where one of a router's Pods answers what it routes to, as seen from the operator; empty when it cannot be told. */
public interface RouterAddress {
    Optional<URI> of(Pod routerPod, RouterKind kind);
}
