package dev.ebb.operator.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.Map;

/** The operator's settings outside Quarkus, read by the same mapping and defaults a deployed operator uses. */
public final class EbbSettings {
    private EbbSettings() {
    }

    /** @param settings {@code ebb.*} properties; everything else at its default */
    public static EbbConfig of(Map<String, String> settings) {
        // with Quarkus' reading of durations ("5m"), which plain SmallRye Config lacks
        return new SmallRyeConfigBuilder().withConverter(Duration.class, 200, new DurationConverter())
                .withSources(new PropertiesConfigSource(settings, "settings", 100)).withMapping(EbbConfig.class).build()
                .getConfigMapping(EbbConfig.class);
    }
}
