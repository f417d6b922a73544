package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.render.RouterAdmin;
import io.fabric8.kubernetes.api.model.Pod;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * In a cluster each router Pod is asked at its own IP, never through the router's Service, which would pick one
 * replica and hide what the others route to. Only an IP literal is used: a Pod's status is not the operator's to
 * trust with a host name to resolve.
 */
@ApplicationScoped
public class ClusterRouterAddress implements RouterAddress {
    private static final Pattern IPV4 =
            Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
    /** Loose on purpose: the URI constructor rejects what is not a well-formed IPv6 literal. */
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*");

    @Override
    public Optional<URI> of(Pod routerPod, RouterKind kind) {
        RouterAdmin admin = RouterAdmin.of(kind);
        return RouterReplicas.address(routerPod)
                .filter(ip -> IPV4.matcher(ip).matches() || IPV6.matcher(ip).matches())
                .flatMap(ip -> {
                    try {
                        // this constructor brackets an IPv6 literal, as a URI needs
                        return Optional.of(new URI("http", null, ip, admin.port(), admin.path(), null, null));
                    } catch (URISyntaxException e) {
                        return Optional.empty();
                    }
                });
    }
}
