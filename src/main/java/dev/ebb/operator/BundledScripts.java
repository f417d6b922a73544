package dev.ebb.operator;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The scripts the operator runs in its Pods and the router configuration it writes, shipped as classpath resources. */
public final class BundledScripts {
    private BundledScripts() {}

    public static String load(String resource) {
        try (InputStream in = BundledScripts.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
