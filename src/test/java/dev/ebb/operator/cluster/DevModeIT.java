package dev.ebb.operator.cluster;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.render.Names;
import dev.ebb.operator.sim.RecordedEvents;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * `make dev` as a developer runs it, in a copy of the project, against the real control plane: Quarkus dev mode starts,
 * applies the CRD, reconciles a ModelDeployment, and takes a change to the operator's code without a restart.
 */
class DevModeIT {
    private static final String NS = "dev";
    private static final String CRD = "modeldeployments.serving.ebb.dev";
    /** A cold dev mode compiles the operator and builds it for dev, on two loaded cores. */
    private static final Duration START = Duration.ofMinutes(6);

    private static final Path ENGINE_OBJECTS = Path.of("src/main/java/dev/ebb/operator/reconcile/EngineObjects.java");
    private static final String CREATED = "\"created \" + pod.getMetadata().getName()";
    private static final String CREATED_CHANGED = "\"created, after a live reload, \" + pod.getMetadata().getName()";

    private static ControlPlane plane;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() {
        plane = ControlPlane.shared();
        admin = plane.adminClient();
    }

    @AfterAll
    static void close() {
        admin.close();
    }

    @Test
    void devModeAppliesTheCrdReconcilesAModelDeploymentAndTakesACodeChangeWithoutARestart() throws Exception {
        Path project = copyOfTheProject();
        // dev mode must apply the CRD itself, so none may be left from another test
        admin.apiextensions().v1().customResourceDefinitions().withName(CRD).delete();
        await("no CRD")
                .atMost(Duration.ofSeconds(60))
                .until(() -> admin.apiextensions()
                                .v1()
                                .customResourceDefinitions()
                                .withName(CRD)
                                .get()
                        == null);
        admin.resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(NS)
                        .endMetadata()
                        .build())
                .serverSideApply();
        int port = freePort();
        Path log = project.resolve("dev.log");
        ProcessBuilder make = new ProcessBuilder("make", "--no-print-directory", "dev")
                .directory(project.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        make.environment().put("KUBECONFIG", plane.adminKubeconfig().toString());
        make.environment().put("KUBECTL", plane.release().binary("kubectl").toString());
        make.environment().remove("SANDBOX");
        // passed on to Maven by its own variable: no debugger port, the health port free here, no interactive console
        make.environment()
                .put("MAVEN_ARGS", "-Ddebug=false -Dquarkus.http.port=" + port + " -Dquarkus.console.enabled=false");
        long begun = System.nanoTime();
        Process dev = make.start();
        dev.getOutputStream().close();
        try {
            await("dev mode started and the CRD applied")
                    .atMost(START)
                    .pollInterval(Duration.ofSeconds(2))
                    .untilAsserted(() -> {
                        assertThat(dev.isAlive()).as(tail(log)).isTrue();
                        CustomResourceDefinition crd = admin.apiextensions()
                                .v1()
                                .customResourceDefinitions()
                                .withName(CRD)
                                .get();
                        assertThat(crd).as(tail(log)).isNotNull();
                        assertThat(crd.getStatus().getConditions())
                                .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
                    });

            long started = System.nanoTime();
            admin.resource(deployment("live", "vLLM")
                            .namespace(NS)
                            .role(role("server").replicas(1))
                            .build())
                    .create();
            await("reconciled").atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                assertThat(created())
                        .as(tail(log))
                        .anySatisfy(message ->
                                assertThat(message).startsWith("created " + Names.pod("live", "server", 0, 0)));
                assertThat(admin.resources(ModelDeployment.class)
                                .inNamespace(NS)
                                .withName("live")
                                .get()
                                .getStatus())
                        .isNotNull();
            });
            long pid = dev.descendants()
                    .filter(p -> p.info().command().map(c -> c.endsWith("java")).orElse(false))
                    .map(ProcessHandle::pid)
                    .reduce((first, last) -> last)
                    .orElseThrow();

            Path engineObjects = project.resolve(ENGINE_OBJECTS);
            String source = Files.readString(engineObjects);
            assertThat(source).contains(CREATED);
            Files.writeString(engineObjects, source.replace(CREATED, CREATED_CHANGED));
            long changed = System.nanoTime();
            HttpClient http = HttpClient.newHttpClient();
            // dev mode looks for changes when a request comes in, and answers it once reloaded
            await("reloaded")
                    .atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofSeconds(2))
                    .untilAsserted(() -> {
                        http.send(
                                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/q/health/live"))
                                        .timeout(Duration.ofSeconds(90))
                                        .build(),
                                HttpResponse.BodyHandlers.discarding());
                        assertThat(Files.readString(log)).as(tail(log)).contains("Live reload total time");
                    });
            Specs.editRole(admin, NS, "live", "server", r -> Specs.withReplicas(r, 2));

            await("the changed code at work")
                    .atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(created())
                            .as(tail(log))
                            .anySatisfy(message -> assertThat(message)
                                    .startsWith("created, after a live reload, " + Names.pod("live", "server", 1, 0))));
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive))
                    .as("the JVM dev mode started in")
                    .contains(true);
            System.out.printf(
                    "make dev: CRD applied %.1f s after the start; the change at work %.1f s after it was saved, in the same JVM%n",
                    (started - begun) / 1e9, (System.nanoTime() - changed) / 1e9);
        } finally {
            dev.descendants().forEach(ProcessHandle::destroy);
            dev.destroy();
            admin.resources(ModelDeployment.class)
                    .inNamespace(NS)
                    .withName("live")
                    .withGracePeriod(0)
                    .delete();
            FileTrees.delete(project);
        }
    }

    private List<String> created() {
        return RecordedEvents.occurrences(admin, NS).stream()
                .filter(e -> "PodCreated".equals(e.getReason()))
                .map(e -> e.getMessage())
                .toList();
    }

    /** What a developer has checked out: the build, the wrapper and the operator's sources. */
    private static Path copyOfTheProject() throws IOException {
        Path project = Files.createTempDirectory("ebb-dev-mode");
        for (String part : List.of("pom.xml", "mvnw", "Makefile", ".mvn", "src/main")) {
            FileTrees.copy(Path.of(part), project.resolve(part));
        }
        return project;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The end of dev mode's output, to show where it stood. */
    private static String tail(Path log) {
        try {
            String text = Files.readString(log, StandardCharsets.UTF_8);
            return "dev mode said:\n" + text.substring(Math.max(0, text.length() - 3000));
        } catch (IOException e) {
            return "no output from dev mode: " + e.getMessage();
        }
    }
}
