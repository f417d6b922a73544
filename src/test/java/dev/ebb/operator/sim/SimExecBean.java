package dev.ebb.operator.sim;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** In the test world the operator's member reads run locally against the fake engines, through {@link LocalExec}. */
public class SimExecBean {
    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    LocalExec localExec() {
        return new LocalExec();
    }

    void close(@Disposes LocalExec exec) {
        exec.close();
    }
}
