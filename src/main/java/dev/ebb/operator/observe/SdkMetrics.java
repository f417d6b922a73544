package dev.ebb.operator.observe;

import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetricsV2;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The SDK's own reconcile metrics ({@code reconciliations_*} per controller), bound to the registry when the SDK asks
 * for them. The extension's provider (quarkus-operator-sdk 7.7.3, {@code MicrometerMetricsProvider}) only fills its
 * metrics in when Micrometer binds it as a {@code MeterBinder}; in a packaged prod start the SDK has taken its
 * {@code Metrics} before that, so it kept {@code Metrics.NOOP} and no reconcile series was ever served
 * (quarkiverse/quarkus-operator-sdk#1385, fixed upstream the same way: the registry injected directly).
 */
public class SdkMetrics {
    @Produces
    @Singleton
    Metrics operatorSdkMetrics(MeterRegistry registry) {
        return MicrometerMetricsV2.newBuilder(registry).build();
    }
}
