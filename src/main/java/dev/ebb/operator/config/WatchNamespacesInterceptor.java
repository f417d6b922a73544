package dev.ebb.operator.config;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Makes {@code ebb.watch-namespaces} the one setting of which namespaces the controller, and with it every informer,
 * watches: the Java Operator SDK's own property is answered from it, cleaned up by {@link WatchedNamespaces}, whenever
 * it is set at all. Unset (tests, dev mode), the SDK's property is read as it stands. Registered through
 * META-INF/services, so it applies to the run-time configuration the extension reads its namespaces from.
 */
public class WatchNamespacesInterceptor implements ConfigSourceInterceptor {
    static final String WATCH_NAMESPACES = "ebb.watch-namespaces";
    /** The extension's per-controller property (ConfigurationUtils.getNamespacesPropertyName at quarkus-operator-sdk 7.7.3). */
    static final String SDK_NAMESPACES = "quarkus.operator-sdk.controllers." + Controller.NAME + ".namespaces";

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        if (!SDK_NAMESPACES.equals(name)) {
            return context.proceed(name);
        }
        ConfigValue raw = context.proceed(WATCH_NAMESPACES);
        if (raw == null) {
            return context.proceed(name);
        }
        return raw.withName(name).withValue(WatchedNamespaces.of(raw.getValue()).sdkValue());
    }

    /** The SDK finds its controllers' settings by their names, so the property is named whenever it is answered. */
    @Override
    public Iterator<String> iterateNames(ConfigSourceInterceptorContext context) {
        Set<String> names = new LinkedHashSet<>();
        context.iterateNames().forEachRemaining(names::add);
        if (names.contains(WATCH_NAMESPACES)) {
            names.add(SDK_NAMESPACES);
        }
        return names.iterator();
    }
}
