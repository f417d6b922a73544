package dev.ebb.operator.sim;

import java.util.concurrent.ThreadFactory;

/** Threads of the test world, named for thread dumps, that never keep a finished run's JVM alive. */
public final class DaemonThreads {
    private DaemonThreads() {}

    public static ThreadFactory named(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
