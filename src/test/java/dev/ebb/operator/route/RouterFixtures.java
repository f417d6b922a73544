package dev.ebb.operator.route;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Router answers kept under src/test/resources/routers/, each built from its release's own shape (see the README beside them). */
public final class RouterFixtures {
    private RouterFixtures() {}

    public static String read(String path) {
        try (InputStream in = RouterFixtures.class.getResourceAsStream("/routers/" + path)) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
