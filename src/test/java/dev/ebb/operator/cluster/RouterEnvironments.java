package dev.ebb.operator.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Where {@code make router-env} installs each released router: the root its install script takes, by directory name. */
final class RouterEnvironments {
    private RouterEnvironments() {}

    static Path of(String name) {
        Path root = Optional.ofNullable(System.getenv("EBB_ROUTER_DIR"))
                .map(Path::of)
                .orElse(Path.of(System.getProperty("user.home"), ".cache", "ebb-routers"));
        return root.resolve(name);
    }

    static boolean installed(String name) {
        return Files.exists(of(name).resolve("installed"));
    }
}
