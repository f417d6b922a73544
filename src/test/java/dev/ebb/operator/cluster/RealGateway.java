package dev.ebb.operator.cluster;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.sim.EngineContainer;
import dev.ebb.operator.sim.EngineRuntime;
import dev.ebb.operator.sim.LocalProcesses;
import dev.ebb.operator.sim.ProcessContainer;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * SGLang's model gateway as released (smg, the wheel {@code make router-env} installs), run by the node agent for
 * each gateway Pod from what the operator rendered: the image's entrypoint ({@code python3 -m smg.launch_router},
 * docker/Dockerfile at v1.9.0) with the container's arguments and literal variables, and the Pod's ServiceAccount as
 * its identity, through a kubeconfig holding a token the TokenRequest API issued for it, as the kubelet projects one.
 * So a flag the release does not know stops the gateway, and a permission the rendered Role lacks stops its discovery.
 *
 * <p>Two things stand in for a Pod's own network namespace: a listener the rendered arguments put on every interface
 * ({@code 0.0.0.0}) takes the Pod's address instead, and so does the Prometheus listener, whose host the rendering
 * leaves at that same default (router_args.py, {@code --prometheus-host 0.0.0.0}); two gateway Pods on one machine
 * would otherwise take the same port.
 */
final class RealGateway implements EngineRuntime {
    static final String RELEASE = "1.9.0";
    private static final String EVERY_INTERFACE = "0.0.0.0";
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final String ENVIRONMENT = "smg-" + RELEASE;
    private final KubernetesClient admin;
    private final Path logs;

    RealGateway(KubernetesClient admin, Path logs) {
        this.admin = admin;
        this.logs = logs;
    }

    static boolean installed() {
        return RouterEnvironments.installed(ENVIRONMENT);
    }

    @Override
    public Optional<EngineContainer> start(Pod pod, String address) throws IOException {
        Container main = pod.getSpec().getContainers().get(0);
        if (!main.getImage().contains("/smg:")) {
            return Optional.empty();
        }
        if (!main.getImage().endsWith(":" + RELEASE)) {
            throw new IllegalStateException("the Pod runs " + main.getImage() + ", the test world has smg " + RELEASE);
        }
        return Optional.of(launch(
                onPodAddress(Optional.ofNullable(main.getArgs()).orElse(List.of()), address),
                ProcessContainer.literalEnvironment(main),
                kubeconfigOf(pod),
                logs.resolve(pod.getMetadata().getName() + ".log")));
    }

    /** The gateway's launcher with these arguments and variables, reaching the API server through this kubeconfig. */
    static ProcessContainer launch(List<String> args, Map<String, String> env, Path kubeconfig, Path log)
            throws IOException {
        List<String> argv = new ArrayList<>(List.of(
                RouterEnvironments.of(ENVIRONMENT).resolve("venv/bin/python").toString(), "-m", "smg.launch_router"));
        argv.addAll(args);
        ProcessBuilder builder =
                LocalProcesses.builder(argv).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(env);
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        return new ProcessContainer(builder.start());
    }

    /** The rendered arguments with every listener on the Pod's address; the Prometheus listener's host is added so. */
    static List<String> onPodAddress(List<String> rendered, String address) {
        List<String> args = new ArrayList<>(rendered);
        for (String flag : List.of("--host", "--prometheus-host")) {
            int at = args.indexOf(flag);
            if (at < 0) {
                args.addAll(List.of(flag, address));
            } else if (at + 1 < args.size() && args.get(at + 1).equals(EVERY_INTERFACE)) {
                args.set(at + 1, address);
            }
        }
        return List.copyOf(args);
    }

    /** A kubeconfig naming the API server, its CA and a fresh token of the Pod's ServiceAccount. */
    private Path kubeconfigOf(Pod pod) throws IOException {
        String namespace = pod.getMetadata().getNamespace();
        TokenRequest request = new TokenRequestBuilder()
                .withNewSpec()
                .withExpirationSeconds(Duration.ofHours(2).toSeconds())
                .endSpec()
                .build();
        String token = admin.serviceAccounts()
                .inNamespace(namespace)
                .withName(pod.getSpec().getServiceAccountName())
                .tokenRequest(request)
                .getStatus()
                .getToken();
        Map<String, Object> config = Map.of(
                "apiVersion",
                "v1",
                "kind",
                "Config",
                "current-context",
                "pod",
                "clusters",
                List.of(Map.of(
                        "name",
                        "cluster",
                        "cluster",
                        Map.of(
                                "server",
                                admin.getConfiguration().getMasterUrl(),
                                "certificate-authority",
                                admin.getConfiguration().getCaCertFile()))),
                "users",
                List.of(Map.of("name", "pod", "user", Map.of("token", token))),
                "contexts",
                List.of(Map.of(
                        "name",
                        "pod",
                        "context",
                        Map.of("cluster", "cluster", "user", "pod", "namespace", namespace))));
        Path file = logs.resolve(pod.getMetadata().getName() + ".kubeconfig");
        Files.writeString(file, YAML.writeValueAsString(config));
        return file;
    }
}
