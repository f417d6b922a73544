package dev.ebb.operator.lifecycle;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.config.InformerStoppedHandler;
import io.quarkus.arc.Unremovable;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Default;
import jakarta.interceptor.Interceptor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;
import org.jboss.logging.Logger;

/**
 * An informer that has stopped for good (its watch refused, say, after the CRD or a permission was removed) leaves
 * the operator blind to what it manages; nothing inside the process brings it back. Liveness goes DOWN so that
 * Kubernetes restarts the operator, which then starts every informer anew. Readiness alone would not: a Pod that is
 * only unready is left running.
 */
@Liveness
// the SDK looks the handler up at start by type alone, i.e. with the default qualifier, which the build's removal of
// unused beans cannot see
@Default
@Unremovable
@ApplicationScoped
public class InformerLiveness implements InformerStoppedHandler, HealthCheck {
    static final String NAME = "Ebb informers";
    private static final Logger LOG = Logger.getLogger(InformerLiveness.class);
    private final Map<String, String> stopped = new ConcurrentHashMap<>();
    private final AtomicBoolean shuttingDown = new AtomicBoolean();

    /** Before the SDK stops its informers on the way out, which is no failure. */
    void onShutdownStarted(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) ShutdownEvent event) {
        shuttingDown.set(true);
    }

    @Override
    public void onStop(SharedIndexInformer informer, Throwable cause) {
        String what = informer == null ? "informer" : informer.getApiTypeClass().getSimpleName() + " informer";
        if (shuttingDown.get() && cause == null) {
            LOG.debugf("the %s stopped with the operator", what);
            return;
        }
        String why = cause == null ? "stopped" : cause.getClass().getSimpleName() + ": " + cause.getMessage();
        stopped.put(what, why);
        LOG.errorf("the %s stopped for good (%s); liveness is DOWN so the operator is restarted", what, why);
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named(NAME).status(stopped.isEmpty());
        stopped.forEach(response::withData);
        return response.build();
    }
}
