package dev.ebb.operator.packaging;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.runtime.configuration.DurationConverter;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * The operator `package` built (target/quarkus-app), run as its own process in the prod profile, as its Deployment's
 * container runs it, against an API server of the test world. Leader election is on, as in production.
 */
public final class PackagedOperator implements AutoCloseable {
    public static final String NAMESPACE = "ebb-system";
    private static final Path APP = Path.of("target", "quarkus-app");
    /** The JVM flags the image starts the operator with; the operator here starts with exactly these. */
    public static final Path JVM_OPTIONS = Path.of("src", "main", "jvm", "jvm.options");

    private static final Path PACKAGED_SETTINGS = Path.of("target", "classes", "application.properties");
    public static final String SHUTDOWN_DELAY = "quarkus.shutdown.delay";
    public static final String TERMINATION_TIMEOUT = "quarkus.operator-sdk.termination-timeout";
    private final Process process;
    private final int port;
    private final Path log;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private PackagedOperator(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** A duration the package configures (prod profile), e.g. how long a SIGTERM may take. */
    public static Duration packagedDuration(String key) throws IOException {
        Properties settings = new Properties();
        try (InputStream in = Files.newInputStream(PACKAGED_SETTINGS)) {
            settings.load(in);
        }
        String value = settings.getProperty(key);
        if (value == null) {
            throw new IllegalStateException(key + " is not set in " + PACKAGED_SETTINGS);
        }
        return new DurationConverter().convert(value);
    }

    /**
     * The rules the packaged ClusterRoles and Roles grant: the API server's rules review answers with these. The test
     * world has one namespace that matters, the operator's, where the Role of its Lease applies too.
     */
    public static List<PolicyRule> packagedRules() throws IOException {
        List<PolicyRule> rules = new ArrayList<>();
        for (HasMetadata item : PackagedManifests.read()) {
            if (item instanceof ClusterRole role) {
                rules.addAll(role.getRules());
            } else if (item instanceof Role role) {
                rules.addAll(role.getRules());
            }
        }
        return rules;
    }

    /**
     * Starts it against the API server the client talks to, in its own namespace (created here), with the given
     * identity for the Lease; its output goes to {@code log}.
     */
    public static PackagedOperator start(KubernetesClient client, String identity, Path log) throws IOException {
        return start(client, identity, log, Map.of());
    }

    /** The same with these variables added to its environment, as its Deployment's env would add them. */
    public static PackagedOperator start(KubernetesClient client, String identity, Path log, Map<String, String> env)
            throws IOException {
        client.resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(NAMESPACE)
                        .endMetadata()
                        .build())
                .createOr(c -> c.update());
        Files.createDirectories(log.toAbsolutePath().getParent());
        // A Pod's service account token, which the mock API server does not check. Without a token at all the client
        // rereads its whole configuration (kubeconfig, properties, environment) before every request once it is a
        // minute old, where with one it does so once a minute: TokenRefreshInterceptor.before and refreshToken in
        // fabric8 kubernetes-client-api 7.5.2 move the refresh time only when a token was found. That was 6 % of the
        // operator's CPU samples at 500 ModelDeployments, a cost no cluster has.
        Path token = Files.writeString(tokenFile(log), "ebb-test-world-token");
        return launch(
                List.of(
                        "-Dkubernetes.master=" + client.getConfiguration().getMasterUrl(),
                        "-Dkubernetes.auth.serviceAccount.token=" + token),
                identity,
                log,
                env);
    }

    /**
     * Starts it against a real API server as a Pod of its Deployment would reach it: the server's address and CA, and
     * the token of its ServiceAccount, with nothing of the harness's own credentials or kubeconfig.
     */
    public static PackagedOperator startAs(
            String masterUrl,
            Path certificateAuthority,
            String serviceAccountToken,
            String identity,
            Path log,
            Map<String, String> env)
            throws IOException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        Path token = Files.writeString(tokenFile(log), serviceAccountToken);
        return launch(
                List.of(
                        "-Dkubernetes.master=" + masterUrl,
                        "-Dkubernetes.certs.ca.file=" + certificateAuthority.toAbsolutePath(),
                        "-Dkubernetes.auth.serviceAccount.token=" + token,
                        "-Dkubernetes.auth.tryKubeConfig=false"),
                identity,
                log,
                env);
    }

    private static Path tokenFile(Path log) {
        return log.toAbsolutePath().resolveSibling(log.getFileName() + ".token");
    }

    /** @param clientSettings the client's own settings, as a kubeconfig or a Pod's service account would give them */
    private static PackagedOperator launch(
            List<String> clientSettings, String identity, Path log, Map<String, String> env) throws IOException {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("@" + JVM_OPTIONS.toAbsolutePath());
        command.addAll(clientSettings);
        command.addAll(List.of(
                "-Dkubernetes.namespace=" + NAMESPACE,
                "-Dquarkus.http.port=" + port,
                "-Debb.leader-election.identity=" + identity,
                "-jar",
                "quarkus-run.jar"));
        // from the application's own directory, as the image's WORKDIR, so the flags' relative paths hold
        ProcessBuilder process = new ProcessBuilder(command)
                .directory(APP.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toAbsolutePath().toFile());
        process.environment().putAll(env);
        return new PackagedOperator(process.start(), port, log);
    }

    /** The HTTP status of one of its endpoints, or -1 when it does not answer. */
    public int status(String path) {
        try {
            return http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .timeout(Duration.ofSeconds(1))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The body of one of its endpoints, or empty when it does not answer 200. */
    public String body(String path) {
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? response.body() : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Its resident set as the kernel counts it, where /proc exists. */
    public OptionalLong residentKiB() {
        return statusKiB("VmRSS:");
    }

    /** The highest resident set the kernel saw for it so far. */
    public OptionalLong residentPeakKiB() {
        return statusKiB("VmHWM:");
    }

    private OptionalLong statusKiB(String field) {
        try {
            return Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status")).stream()
                    .filter(line -> line.startsWith(field))
                    .mapToLong(line -> Long.parseLong(line.replaceAll("[^0-9]", "")))
                    .findFirst();
        } catch (IOException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * CPU time each of its live threads has used so far (user and system, in the kernel's clock ticks), by thread id
     * and with the name the kernel keeps (the JVM's thread name, cut to 15 characters); empty without /proc.
     */
    public Map<String, Long> cpuTicksByThread() {
        Map<String, Long> ticks = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
            tasks.forEach(task -> {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    // "tid (name) state ...": the name may hold spaces and parentheses, so split at the last ')'
                    int close = stat.lastIndexOf(')');
                    String name = stat.substring(stat.indexOf('(') + 1, close);
                    String[] fields = stat.substring(close + 2).split(" ");
                    // after the name: state is field 3, utime 14 and stime 15 (proc(5)), so indexes 11 and 12 here
                    ticks.put(task.getFileName() + " " + name, Long.parseLong(fields[11]) + Long.parseLong(fields[12]));
                } catch (IOException | RuntimeException e) {
                    // a thread that ended between the listing and the read used nothing more worth counting
                }
            });
        } catch (IOException e) {
            return Map.of();
        }
        return ticks;
    }

    /** CPU time its threads have used so far, user and system, as the kernel counts it. */
    public Duration cpu() {
        return process.info().totalCpuDuration().orElse(Duration.ZERO);
    }

    public Process process() {
        return process;
    }

    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
