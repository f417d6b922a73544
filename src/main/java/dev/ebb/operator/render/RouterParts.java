package dev.ebb.operator.render;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import java.util.List;

/** Pieces every router layout is built from. */
final class RouterParts {
    private RouterParts() {
    }

    static ServicePort servicePort(String name, int number) {
        return new ServicePortBuilder().withName(name).withPort(number).withTargetPort(new IntOrString(number)).withProtocol("TCP").build();
    }

    static List<ContainerPort> containerPorts(List<ServicePort> ports) {
        return ports.stream()
                .map(p -> new ContainerPortBuilder().withName(p.getName()).withContainerPort(p.getPort()).withProtocol("TCP").build())
                .toList();
    }

    /** A container that cannot gain privileges or write its image. */
    static SecurityContext locked() {
        return new SecurityContextBuilder().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                .withNewCapabilities().withDrop("ALL").endCapabilities().build();
    }

    /** Pod discovery, read-only. */
    static PolicyRule podReader() {
        return new PolicyRuleBuilder().withApiGroups("").withResources("pods").withVerbs("get", "list", "watch").build();
    }
}
