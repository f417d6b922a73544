package dev.ebb.operator.config;

import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;

/** The operator reads time through one injected clock, so that budgets measured in minutes can be tested in seconds. */
public class Clocks {
    @Produces
    @Singleton
    @DefaultBean
    Clock clock() {
        return Clock.systemUTC();
    }
}
