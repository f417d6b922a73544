package dev.ebb.operator.config;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

/** Says at start which namespaces the operator watches, and which entries of its setting it left out. */
@ApplicationScoped
public class WatchedNamespacesReport {
    private static final Logger LOG = Logger.getLogger(WatchedNamespacesReport.class);

    void onStart(@Observes StartupEvent event, EbbConfig config) {
        config.watchNamespaces().ifPresent(raw -> {
            WatchedNamespaces watched = WatchedNamespaces.of(raw);
            if (watched.refused().isEmpty()) {
                LOG.infof("%s (%s)", watched.describe(), WatchNamespacesInterceptor.WATCH_NAMESPACES);
            } else {
                LOG.warnf("%s (%s)", watched.describe(), WatchNamespacesInterceptor.WATCH_NAMESPACES);
            }
        });
    }
}
