package dev.ebb.operator.config;

import dev.ebb.operator.api.SpecResolver;
import dev.ebb.operator.render.RouterLayout;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** The one resolver of ModelDeployments: the operator's default images, and each router layout's own limits. */
public class Resolvers {
    @Produces
    @Singleton
    SpecResolver resolver(EbbConfig config) {
        return of(config);
    }

    /** The resolver the operator runs with these settings, for an operator built by hand. */
    public static SpecResolver of(EbbConfig config) {
        return new SpecResolver(config.images()::of, config.images()::of, RouterLayout::unservableBy);
    }
}
