package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import java.net.URI;

/** Where a deployment's router answers, as seen from the operator. */
public interface RouterAddress {
    URI of(ModelDeployment deployment, RouterKind kind);
}
