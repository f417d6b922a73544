package dev.ebb.operator.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.Map;

/** The operator's settings outside Quarkus, read by the same mapping and defaults a deployed operator uses. */
public final class EbbSettings {
    private EbbSettings() {}

    /** @param settings {@code ebb.*} properties; everything else at its default; one this mapping lacks is refused */
    public static EbbConfig of(Map<String, String> settings) {
        return read(settings, true);
    }

    /**
     * As a deployed operator reads its configuration: Quarkus warns of a setting it does not know and goes on without
     * it ("Unrecognized configuration key ... it will be ignored", quarkus-core 3.33.2,
     * io/quarkus/runtime/configuration/ConfigDiagnostic.java, reportUnknown), so settings written for a newer operator
     * leave an older one at its defaults.
     */
    public static EbbConfig ignoringUnknown(Map<String, String> settings) {
        return read(settings, false);
    }

    /** Whether every one of these settings is one this operator knows. */
    public static boolean known(Map<String, String> settings) {
        try {
            of(settings);
            return true;
        } catch (ConfigValidationException e) {
            return false;
        }
    }

    private static EbbConfig read(Map<String, String> settings, boolean refuseUnknown) {
        // with Quarkus' reading of durations ("5m"), which plain SmallRye Config lacks
        return new SmallRyeConfigBuilder()
                .withConverter(Duration.class, 200, new DurationConverter())
                .withValidateUnknown(refuseUnknown)
                .withSources(new PropertiesConfigSource(settings, "settings", 100))
                .withMapping(EbbConfig.class)
                .build()
                .getConfigMapping(EbbConfig.class);
    }
}
