package dev.ebb.operator.soak;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.FileHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Every record logged at ERROR (JUL's SEVERE, which JBoss's ERROR maps to) by the operator, the SDK and the client,
 * kept for the check; every warning and error also goes to a file, the console stays for the soak's own output.
 * The operator logs through JBoss Logging and fabric8 and the SDK through SLF4J, which on this classpath both end in
 * the JBoss log manager's context; JUL's own root is watched as well, for whatever logs there.
 */
final class ErrorLog {
    record Entry(Instant at, String logger, String message, String stack) {}

    private final List<Entry> errors = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.SEVERE.intValue()) {
                errors.add(new Entry(
                        record.getInstant(),
                        String.valueOf(record.getLoggerName()),
                        format(record),
                        stack(record.getThrown())));
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    /** Must run before anything logs: JBoss Logging picks its back end once. */
    static void chooseBackEnd() {
        System.setProperty("org.jboss.logging.provider", "jboss");
    }

    private static final String TEST_WORLD = "dev.ebb.operator.sim";
    private final FileHandler toFile;

    ErrorLog(Path file) {
        try {
            Files.createDirectories(file.getParent());
            toFile = new FileHandler(file.toString());
            toFile.setFormatter(new SimpleFormatter());
            // warnings from everyone, and everything the test world's own pieces say (the kubelet's failed binds are
            // debug)
            toFile.setFilter(r -> r.getLevel().intValue() >= Level.WARNING.intValue()
                    || String.valueOf(r.getLoggerName()).startsWith(TEST_WORLD));
            org.jboss.logmanager.LogContext.getSystemLogContext()
                    .getLogger(TEST_WORLD)
                    .setLevel(Level.FINE);
            for (Logger root : List.of(
                    org.jboss.logmanager.LogContext.getSystemLogContext().getLogger(""), Logger.getLogger(""))) {
                for (Handler h : root.getHandlers()) {
                    root.removeHandler(h);
                }
                root.setLevel(Level.INFO);
                root.addHandler(capture);
                root.addHandler(toFile);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Logs an ERROR through each façade the operator's side uses and checks that both arrived, so that a soak without
     * errors is known to have been listening; the two are then forgotten.
     */
    void proveCaptured() {
        String sentinel = "soak: checking that errors are captured " + System.nanoTime();
        org.jboss.logging.Logger.getLogger("dev.ebb.soak").error(sentinel);
        org.slf4j.LoggerFactory.getLogger("io.fabric8.soak").error(sentinel);
        long arrived = errors.stream().filter(e -> sentinel.equals(e.message())).count();
        errors.removeIf(e -> sentinel.equals(e.message()));
        if (arrived != 2) {
            throw new IllegalStateException(
                    "only " + arrived + " of 2 test errors reached the soak's log handler: errors would go unseen");
        }
    }

    /** Stops writing the file; errors logged later are no longer the soak's. */
    void close() {
        for (Logger root :
                List.of(org.jboss.logmanager.LogContext.getSystemLogContext().getLogger(""), Logger.getLogger(""))) {
            root.removeHandler(capture);
            root.removeHandler(toFile);
        }
        toFile.close();
    }

    List<Entry> errors() {
        return List.copyOf(errors);
    }

    private static String format(LogRecord record) {
        if (record instanceof org.jboss.logmanager.ExtLogRecord ext) {
            return ext.getFormattedMessage();
        }
        String message = record.getMessage();
        try {
            if (record.getParameters() != null && message != null && message.contains("{0")) {
                message = java.text.MessageFormat.format(message, record.getParameters());
            }
        } catch (IllegalArgumentException ignored) {
            // the raw pattern says enough
        }
        return message;
    }

    private static String stack(Throwable thrown) {
        if (thrown == null) {
            return "";
        }
        StringWriter out = new StringWriter();
        thrown.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
